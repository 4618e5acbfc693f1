# KVM's own selftests on the running outer kernel: the programs
# scripts/kvm-selftests.sh built from our patched tree of this kernel's base
# (6.12 or 7.2; make upstream-selftests packs them as
# /hwlab/data/kvm-selftests/BASE/): our two (hwpoison_sigbus_test for 0001,
# the hugetlb SIGBUS's si_addr_lsb; cpuid_mca_recovery_test for 0007, SUCCOR
# in KVM_GET_SUPPORTED_CPUID) and upstream's on the same ground (CPUID, MCE
# injection, memslots, prefaulting, guest_memfd). A check per program, by
# its kselftest exit status (0 pass, 4 skip with the reason it printed,
# else fail). On a host without the patch a test was written for (Debian's
# stock kernels, kernel/features), that test must FAIL: a pass there means it
# does not test the patch, and is this scenario's failure. The last line:
#   HWLAB-UPSTREAM-KVM base=B passed=N failed=N skipped=N failed_as_expected=N
. /hwlab/scenarios/_lib.sh
. /hwlab/scenarios/_upstream.sh

base=$(upstream_base)
dir=/hwlab/data/kvm-selftests/$base
if ! ls "$dir"/*_test >/dev/null 2>&1; then
	skip upstream-kvm "no KVM selftests for base ${base:-?} (kernel $(uname -r)) in this image: make upstream-selftests packs those of each patched tree built here (make host-kernel HOST=6.12|7.2)"
	echo "HWLAB-UPSTREAM-KVM base=${base:-?} passed=0 failed=0 skipped=0 failed_as_expected=0 (none in the image)"
	finish
fi
echo "  upstream-kvm: base $base, kernel $(uname -r), host ${HWLAB_HOST:-?}, tests of $(cat "$dir/source" 2>/dev/null || echo '?')"
# 0001's test backs its memslot with 2 MiB hugetlb pages
echo 8 >/proc/sys/vm/nr_hugepages

# patched_by NAME: the kernel/features feature the test was written for
patched_by() {
	case $1 in
	hwpoison_sigbus_test) echo kvm-hugetlb-lsb ;;
	cpuid_mca_recovery_test) echo kvm-succor ;;
	esac
}

n_pass=0 n_fail=0 n_skip=0 n_expected=0
echo "hwlab-upstream-kvm start" >/dev/kmsg
for t in "$dir"/*_test; do
	name=${t##*/}
	log=/tmp/kvm-$name.log
	echo "  upstream-kvm: run $name"
	timeout -s KILL "$(bound 600)" "$t" >"$log" 2>&1
	rc=$?
	sed 's/^/  | /' "$log" | tail -n 15
	# (a failed assertion's backtrace asks for addr2line, which the image lacks)
	last=$(grep . "$log" | grep -v 'addr2line' | tail -n 2 | tr '\n' ' ' | cut -c1-200)
	feature=$(patched_by "$name")
	if [ -n "$feature" ] && ! host_has "$feature"; then
		# its own assertion (TEST_ASSERT exits 254 after saying so), not
		# a crash (no such words) or our timeout's kill (137)
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && [ "$rc" -ne 137 ] &&
			grep -q 'Test Assertion Failure' "$log"; then
			pass "kvm-$name" "fails without $feature ($(feature_origin "$feature")), as it must: exit $rc, $last"
			n_expected=$((n_expected + 1))
		else
			fail "kvm-$name" "exit $rc on a host without $feature, not its assertion failing: $last"
			n_fail=$((n_fail + 1))
		fi
		continue
	fi
	case $rc in
	0) pass "kvm-$name" "exit 0"; n_pass=$((n_pass + 1)) ;;
	4) skip "kvm-$name" "$(grep -m1 -i skip "$log" | cut -c1-200)"; n_skip=$((n_skip + 1)) ;;
	137) fail "kvm-$name" "no end after $(bound 600) s (killed)"; n_fail=$((n_fail + 1)) ;;
	*) fail "kvm-$name" "exit $rc, $last"; n_fail=$((n_fail + 1)) ;;
	esac
done
echo 0 >/proc/sys/vm/nr_hugepages
# a test that poisons must not leave the kernel complaining
splats=$(dmesg | awk 'seen; /hwlab-upstream-kvm start/ { seen = 1 }' | grep -cE 'BUG:|WARNING:|Call Trace:' || true)
check kvm-selftests-no-splat "no BUG:, WARNING: or Call Trace: in the kernel log since the first test ($splats)" \
	test "$splats" -eq 0
echo "HWLAB-UPSTREAM-KVM base=$base passed=$n_pass failed=$n_fail skipped=$n_skip failed_as_expected=$n_expected"
finish
