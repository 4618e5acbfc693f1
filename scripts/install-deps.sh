#!/usr/bin/env bash
# Install, with apt-get, exactly what the build and the tests need.
set -euo pipefail
pkgs=(
	linux-source-6.1		# the outer VM's kernel source
	gcc make libc6-dev		# VMM (static), guest, tests
	bc flex bison libelf-dev libssl-dev dwarves	# kernel build
	ccache				# makes kernel rebuilds after a patch change fast
	qemu-system-x86			# the outer VM (TCG)
	busybox-static cpio file	# the outer VM's initramfs
	git perl python3-ply		# git am of kernel/series; checkpatch.pl
	python3				# tests/ helpers
	libvirt-dev pkg-config		# hwpoison-guest --domain/--watch (libvirt + libvirt-qemu)
	libvirt-daemon-driver-qemu	# the embedded QEMU driver the comparison runs QEMU through
	util-linux			# unshare: a private passwd for that driver in host tests
	libnuma-dev libcap-dev		# upstream mm selftests, linked static (make upstream-selftests)
)
if [ "$(id -u)" != 0 ]; then sudo=sudo; else sudo=; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${pkgs[@]}"
