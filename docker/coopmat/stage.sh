#!/bin/sh
# docker/coopmat/stage.sh STAGE: from the repo root, fills STAGE with what
# `make coopmat-test` runs in the trixie root, a tree mirroring the repo as
# docker/stage.sh makes for docker-test, for the packages $COOPMAT_PKGS
# only (default ./ops ./vk):
#   <pkg dir>/<name>.test   the package's test binary (go test -c, a plain
#                           host build, cgo as usual: bookworm's glibc 2.36
#                           runs in trixie's 2.41)
#   <pkg dir>/testdata/     that package's testdata, symbolic links resolved
#   glsl/*                  the shaders' sources (ops checks the fixed tile
#                           of glsl/convolution_gemm_weights.comp)
#   run-tests               docker/coopmat/run-tests, the runner in the root
# $GO is the go command.
set -eu
stage=${1:?usage: docker/coopmat/stage.sh STAGE}
GO=${GO:-go}
pkgs=${COOPMAT_PKGS:-./ops ./vk}
case $stage in '' | / | . | ./ | .. | ../) echo "docker/coopmat/stage.sh: refusing STAGE=$stage" >&2; exit 1 ;; esac

start=$(date +%s)
rm -rf "$stage"
mkdir -p "$stage"
cp docker/coopmat/run-tests "$stage/"

mod=$($GO list -m)
n=0
for p in $pkgs; do
	$GO list -f '{{.ImportPath}} {{.Dir}}' "$p"
done >"$stage/.pkgs"
while read -r ip dir; do
	rel=${ip#"$mod"}
	rel=${rel#/}
	[ -n "$rel" ] || rel=.
	mkdir -p "$stage/$rel"
	$GO test -c -o "$stage/$rel/${ip##*/}.test" "$ip" ||
		{ echo "docker/coopmat/stage.sh: go test -c $ip failed" >&2; exit 1; }
	[ -x "$stage/$rel/${ip##*/}.test" ] || { echo "docker/coopmat/stage.sh: go test -c wrote no binary for $ip" >&2; exit 1; }
	[ ! -d "$dir/testdata" ] || cp -RL "$dir/testdata" "$stage/$rel/"
	n=$((n + 1))
done <"$stage/.pkgs"
rm -f "$stage/.pkgs"

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files --cached --others --exclude-standard -- 'glsl/*'
else
	find glsl -type f
fi | while IFS= read -r f; do
	[ -f "$f" ] || continue # deleted in the work tree
	mkdir -p "$stage/$(dirname "$f")"
	cp "$f" "$stage/$f"
done
chmod -R a+rX,go-w "$stage"
echo "docker/coopmat/stage.sh: $n test binaries ($pkgs), their testdata, glsl/ in $(($(date +%s) - start))s" >&2
