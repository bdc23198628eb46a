#!/bin/sh
# docker/stage.sh STAGE: fills the Docker build context STAGE (run from the repo root)
# with STAGE/root/, copied as is onto / of the image:
#   usr/local/bin/vkmps-run-tests          the in-container runner (docker/run-tests)
#   usr/local/bin/vkmps                    the command, when cmd/vkmps exists
#   opt/vkmps/<pkg dir>/<name>.test        every package's test binary (go test -c)
#   opt/vkmps/<pkg dir>/testdata/          that package's testdata, symlinks resolved
# Binaries are built on the host with cgo against the host's glibc, so the host's
# glibc must not be newer than bookworm's (2.36); a warning says when it is.
set -eu
stage=${1:?usage: docker/stage.sh STAGE}
GO=${GO:-go}

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
