#!/bin/sh
# docker/coopmat/root.sh: makes sure the Debian trixie root for KHR
# cooperative matrices exists, building it when it does not, and prints its
# absolute path on stdout (everything else goes to stderr). `make
# trixie-root` runs it; `make coopmat-test` and the wrappers beside this
# script (glslc, spirv-val) use the root.
#
#   COOPMAT_ROOT            the root, a directory (default docker/coopmat/.root/trixie;
#                           a relative path is taken from the repo root; git-ignored)
#   DEBIAN_MIRROR           default http://deb.debian.org/debian
#   DEBIAN_SECURITY_MIRROR  default http://deb.debian.org/debian-security
#
# The root is `debootstrap --variant=minbase trixie` plus glslc and
# spirv-tools (glslang 15: it compiles GL_KHR_cooperative_matrix, which
# bookworm's glslc cannot, and a spirv-val that accepts it), libvulkan1,
# vulkan-validationlayers and vulkan-tools (vulkaninfo) from trixie, and
# mesa-vulkan-drivers from trixie-backports (Mesa 26: lavapipe's CPU device
# has VK_KHR_cooperative_matrix; trixie's Mesa 25 has not). It is kept and
# reused while its stamp (the hash of this script and the mirrors, in
# ROOT/.vkmps-stamp) matches. A new one is built beside ROOT, checked (its
# glslc compiles a GL_KHR_cooperative_matrix shader that its spirv-val
# accepts; its Mesa is 26 or newer) and then moved into place. Building
# needs root (debootstrap, chroot); installs debootstrap and
# debian-archive-keyring with apt-get when missing. `make coopmat-clean`
# removes it.
set -eu

log() { echo "docker/coopmat/root.sh: $*" >&2; }
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
ROOT=${COOPMAT_ROOT:-docker/coopmat/.root/trixie}
case $ROOT in /*) ;; *) ROOT=$repo/$ROOT ;; esac
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
PKGS="glslc spirv-tools libvulkan1 vulkan-validationlayers vulkan-tools"
BACKPORTS_PKGS="mesa-vulkan-drivers"
MESA_MIN=26

. "$here/../trixie.sh"
stamp=$( (cat "$0" "$here/../trixie.sh"; echo "$MIRROR $SECURITY_MIRROR") | sha256sum | cut -c1-16)
have=$(cat "$ROOT/.vkmps-stamp" 2>/dev/null || true)
if [ "$have" = "$stamp" ]; then echo "$ROOT"; exit 0; fi
if [ -n "$have" ]; then
	log "$ROOT is out of date (stamp $have, want $stamp): rebuilding"
elif [ -e "$ROOT" ]; then
	log "$ROOT has no stamp (an unfinished or foreign root): rebuilding"
fi

trixie_prereqs

# Built beside ROOT (same file system), so that the final mv is a rename.
parent=$(dirname "$ROOT")
mkdir -p "$parent"
trixie_tmp "$parent" .build
fail() { # fail WHAT: the end of the step's log, then exit 1
	tail -n 20 "$tmp/log" >&2
	log "$1 failed (building in $r)"; exit 1
}

start=$(date +%s)
log "debootstrap --variant=minbase trixie from $MIRROR into $r ..."
trixie_bootstrap "$r" "$MIRROR" "$tmp/log" "deb $MIRROR trixie main" "deb $MIRROR trixie-updates main" \
	"deb $SECURITY_MIRROR trixie-security main" "deb $MIRROR trixie-backports main"
apt="apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends"
log "apt-get install $PKGS ($(($(date +%s) - start))s) ..."
chroot "$r" env DEBIAN_FRONTEND=noninteractive sh -c "apt-get update -qq && $apt $PKGS" >"$tmp/log" 2>&1 ||
	fail "apt-get install $PKGS"
log "apt-get install -t trixie-backports $BACKPORTS_PKGS ($(($(date +%s) - start))s) ..."
chroot "$r" env DEBIAN_FRONTEND=noninteractive sh -c "$apt -t trixie-backports $BACKPORTS_PKGS" >"$tmp/log" 2>&1 ||
	fail "apt-get install -t trixie-backports $BACKPORTS_PKGS"
versions=$(chroot "$r" dpkg-query -W -f '${Package} ${Version}, ' $PKGS $BACKPORTS_PKGS)
mesa=$(chroot "$r" dpkg-query -W -f '${Version}' mesa-vulkan-drivers)
trixie_unmount "$r"
rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/cache/apt/*.bin "$r"/var/lib/apt/lists/* \
	"$r"/var/log/*.log "$r/etc/resolv.conf" "$r/etc/hostname" 2>/dev/null || true

# The checks: Mesa's version, and the root's glslc and spirv-val (through
# the wrappers, as make shaders runs them) on a KHR cooperative-matrix shader.
if ! dpkg --compare-versions "$mesa" ge "$MESA_MIN~"; then
	log "the root's mesa-vulkan-drivers is $mesa, not $MESA_MIN or newer (is trixie-backports on $MIRROR?)"; exit 1
fi
cat >"$tmp/coopmat.comp" <<'EOF'
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer AB { float16_t ab[]; };
layout(std430, binding = 1) buffer C { float c[]; };
void main() {
	coopmat<float16_t, gl_ScopeSubgroup, 8, 8, gl_MatrixUseA> a;
	coopmat<float16_t, gl_ScopeSubgroup, 8, 8, gl_MatrixUseB> b;
	coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> acc =
		coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator>(0.0);
	coopMatLoad(a, ab, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
	coopMatLoad(b, ab, 64, 8, gl_CooperativeMatrixLayoutColumnMajor);
	acc = coopMatMulAdd(a, b, acc);
	coopMatStore(acc, c, 0, 8, gl_CooperativeMatrixLayoutRowMajor);
}
EOF
COOPMAT_ROOT=$r "$here/glslc" --target-env=vulkan1.1 -O "$tmp/coopmat.comp" -o "$tmp/coopmat.spv" >"$tmp/log" 2>&1 ||
	fail "the root's glslc on a GL_KHR_cooperative_matrix shader"
COOPMAT_ROOT=$r "$here/spirv-val" --target-env vulkan1.1 "$tmp/coopmat.spv" >"$tmp/log" 2>&1 ||
	fail "the root's spirv-val on the cooperative-matrix SPIR-V"
log "checked: Mesa $mesa; glslc compiles a GL_KHR_cooperative_matrix shader, spirv-val accepts it"

echo "$stamp" >"$r/.vkmps-stamp"
# Into place: the old root (if any) aside, the new one renamed in, the old removed.
if [ -e "$ROOT" ]; then
	mv "$ROOT" "$tmp/old"
fi
mv "$r" "$ROOT"
log "built $ROOT in $(($(date +%s) - start))s: ${versions%, }"
echo "$ROOT"
