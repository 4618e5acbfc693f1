#!/usr/bin/env bash
# Build and run the KVM selftests of a host kernel's tree: the two of our
# kvm series (kernel/BASE/kvm/: the hwpoison SIGBUS's si_addr_lsb, the MCA
# recovery bits of CPUID 0x80000007 EBX) and the upstream ones on the same
# ground (KVM_GET_SUPPORTED_CPUID, MCE injection, memslots, prefaulting,
# guest_memfd), linked statically.
#
#   scripts/kvm-selftests.sh build BASE OUTDIR [KERNEL_TREE]
#       Build them from KERNEL_TREE (default: the tree in
#       build/hosts/BASE/kernel.tree, as make host-kernel HOST=BASE leaves
#       it; kernel/build.sh writes OUTPUT/kernel.tree) into OUTDIR/, one
#       binary per test, with OUTDIR/key and OUTDIR/source (what they were
#       built from). They are built from a copy of the tree's committed
#       source (git archive HEAD: tools/, the uapi headers and what
#       make headers needs), never in the tree itself, and cached in
#       $HWLAB_CACHE/kvm-selftests-BASE-KEY/, KEY a hash of the tree's HEAD
#       commit (the source and the series applied), the test list and this
#       script: a second build with nothing changed is a copy.
#
#   scripts/kvm-selftests.sh run BZIMAGE OUTDIR [LOG]
#       Boot BZIMAGE in the outer VM (QEMU TCG, -cpu max: an AMD vCPU with
#       SVM, so kvm_amd) with an initramfs of busybox and OUTDIR's tests,
#       which /init runs as root with 8 free 2MiB hugetlb pages, printing one
#       "HWLAB-CHECK PASS|FAIL|SKIP kvm-selftest-NAME: ..." line per test
#       (kselftest exit codes: 0 pass, 4 skip, others fail), then reboot -f,
#       which ends QEMU (-no-reboot; a tinyconfig kernel cannot power off).
#       LOG gets the console. Exits with the number of failures. Never run
#       the tests on this machine: the hwpoison test poisons pages.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: scripts/kvm-selftests.sh build BASE OUTDIR [KERNEL_TREE] | run BZIMAGE OUTDIR [LOG]"
die() { echo "kvm-selftests: error: $*" >&2; exit 1; }
cache=${HWLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hwpoison-lab}

# tests BASE: the selftests to build, as paths under tools/testing/selftests/kvm
# (6.12 keeps the x86 ones in x86_64/, 7.2 in x86/)
tests() {
	local arch=x86
	[ "$1" = 6.12 ] && arch=x86_64
	echo "$arch/hwpoison_sigbus_test $arch/cpuid_mca_recovery_test" \
		"$arch/cpuid_test $arch/ucna_injection_test set_memory_region_test" \
		"pre_fault_memory_test guest_memfd_test"
}

build() {
	local kbase=${1:?$usage} out=${2:?$usage} tree=${3:-} key dir work t
	case $kbase in 6.12 | 7.2) ;; *) die "BASE must be 6.12 or 7.2, not '$kbase'" ;; esac
	[ -n "$tree" ] || tree=$(cat "$here/build/hosts/$kbase/kernel.tree" 2>/dev/null) ||
		die "no KERNEL_TREE and no build/hosts/$kbase/kernel.tree (make host-kernel HOST=$kbase)"
	git -C "$tree" rev-parse -q --verify HEAD >/dev/null 2>&1 || die "$tree is not a kernel git tree"
	case $(git -C "$tree" log -1 --format=%s "$(git -C "$tree" rev-list --max-parents=0 HEAD)") in
	"linux-source-$kbase "*) ;;
	*) die "$tree is not a linux-source-$kbase tree" ;;
	esac
	key=$( { git -C "$tree" rev-parse HEAD; tests "$kbase"; cat "$0"; } | sha256sum | cut -c1-16)
	dir=$cache/kvm-selftests-$kbase-$key
	mkdir -p "$cache"
	exec 9>"$dir.lock"
	flock 9
	if [ ! -f "$dir/done" ]; then
		rm -rf "$dir"
		work=$dir/src
		mkdir -p "$work" "$dir/bin"
		echo "kvm-selftests: building $(tests "$kbase" | wc -w) tests of $tree ($key)"
		git -C "$tree" archive HEAD Makefile Kbuild scripts include arch/x86 tools usr |
			tar -x -C "$work"
		(
			cd "$work"
			nice make -s ARCH=x86_64 headers
			# OUTPUT named: lib.mk sets it only at MAKELEVEL 0, and
			# under our Makefile the tests' paths would lose their
			# directory and each fall to make's builtin rule, unlinked
			for t in $(tests "$kbase"); do
				nice make -s -C tools/testing/selftests/kvm ARCH=x86_64 \
					OUTPUT="$work/tools/testing/selftests/kvm" \
					-j"${JOBS:-2}" LDFLAGS=-static "$work/tools/testing/selftests/kvm/$t"
				cp "tools/testing/selftests/kvm/$t" "$dir/bin/"
			done
		) >"$dir/build.log" 2>&1 || { tail -n 30 "$dir/build.log" >&2; die "build failed (see $dir/build.log)"; }
		rm -rf "$work"
		touch "$dir/done"
		# keep the two newest builds of each base
		ls -dt "$cache/kvm-selftests-$kbase"-???????????????? | tail -n +3 |
			while read -r old; do rm -rf "$old" "$old.lock"; done
	fi
	# OUTDIR/key changes only with the build (make's .changed looks at it)
	if [ "$(cat "$out/key" 2>/dev/null)" != "$key" ]; then
		# (only what an earlier build put there: OUTDIR is the caller's)
		mkdir -p "$out"
		rm -f "$out"/*_test "$out/key" "$out/source"
		cp "$dir"/bin/* "$out/"
		# what they were built from: the tree's root commit subject and HEAD
		echo "$(git -C "$tree" log -1 --format=%s "$(git -C "$tree" rev-list --max-parents=0 HEAD)")" \
			"+ series at $(git -C "$tree" rev-parse --short=12 HEAD)" >"$out/source"
		echo "$key" >"$out/key"
	fi
	echo "kvm-selftests: $(ls "$dir/bin" | wc -l) tests in $out (cached in $dir)"
}

run() {
	local bzimage=${1:?$usage} bins=${2:?$usage} log=${3:-/dev/null} root initrd mhz rc=0
	[ -f "$bzimage" ] || die "no kernel at $bzimage"
	ls "$bins"/*_test >/dev/null 2>&1 || die "no tests in $bins (scripts/kvm-selftests.sh build)"
	root=$(mktemp -d)
	trap 'rm -rf "$root"' RETURN
	mkdir -p "$root"/{bin,proc,sys,dev,tmp,tests}
	cp /bin/busybox "$root/bin/busybox"
	cp "$bins"/*_test "$root/tests/"
	cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo 8 >/proc/sys/vm/nr_hugepages
echo "KVM-SELFTESTS kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo)"
echo "KVM-SELFTESTS cpu flags:$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'svm|succor|overflow_recov|smca' | tr '\n' ' ')"
echo "KVM-SELFTESTS hugepages free: $(cat /proc/sys/vm/nr_hugepages)"
for t in /tests/*_test; do
	name=${t##*/}
	echo "KVM-SELFTESTS run $name"
	$t >/tmp/out 2>&1
	rc=$?
	sed 's/^/  | /' /tmp/out
	case $rc in
	0) echo "HWLAB-CHECK PASS kvm-selftest-$name: exit 0" ;;
	4) echo "HWLAB-CHECK SKIP kvm-selftest-$name: $(grep -m1 -i skip /tmp/out)" ;;
	*) echo "HWLAB-CHECK FAIL kvm-selftest-$name: exit $rc, $(tail -n 3 /tmp/out | tr '\n' ' ')" ;;
	esac
done
dmesg | grep -iE 'memory failure|hwpoison|bug:|warning:|call trace' | sed 's/^/KVM-SELFTESTS dmesg: /'
echo "KVM-SELFTESTS done"
reboot -f
EOF
	chmod +x "$root/init"
	initrd=$root.cpio.gz
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd"
	# TCG's TSC runs at the host's rate, and calibrating it against the
	# emulated PIT fails on a loaded host: the kernel falls back to jiffies
	# and KVM_GET_TSC_KHZ returns 0, which every selftest's VM creation
	# asserts against. Tell the kernel the frequency, as outer-qemu/boot.sh does.
	mhz=$(awk -F: '/^cpu MHz/ { printf "%d", $2; exit }' /proc/cpuinfo 2>/dev/null)
	timeout --foreground -k 5 "${KVM_SELFTESTS_TIMEOUT:-1800}" \
		qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 2G \
		-nographic -no-reboot -kernel "$bzimage" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 tsc=reliable${mhz:+ tsc_early_khz=$((mhz * 1000))} highres=off" \
		</dev/null >"$root.log" 2>&1 || rc=$?
	rm -f "$initrd"
	tr -d '\r' <"$root.log" | tee "$log"
	grep -q '^KVM-SELFTESTS done' "$root.log" || { rm -f "$root.log"; die "the outer VM did not finish (qemu rc $rc)"; }
	rc=$(grep -c '^HWLAB-CHECK FAIL' "$root.log" || true)
	rm -f "$root.log"
	return "$rc"
}

case ${1:-} in
build) shift; build "$@" ;;
run) shift; run "$@" ;;
*) die "$usage" ;;
esac
