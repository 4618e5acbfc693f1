# Side by side with QEMU (issues #12, #23), in one outer-VM boot: hwlab-vmm
# and three QEMUs (-accel kvm), each run by its own suite's libvirt as its
# users run it: sid's QEMU 11.1 with libvirt 12, trixie's 10.0 with libvirt
# 11 (each in its chroot /hwlab/peers/SUITE, _lib.sh's peer_ready) and
# bookworm's 7.2 with libvirt 9.0 (packed into the image itself). Each boots
# the same guests, our bzImage and sid's stock kernel (the same inner
# initramfs), and the same page of the same inner process is poisoned from
# the outer kernel's debugfs. For QEMU, hwpoison-guest is a libvirt client:
# its watch (--watch --start) starts the domain through the embedded driver
# (qemu:///embed, no daemon: the driver runs in the client, so the one watch
# process starts the domain, finds QEMU's pid and the GPA -> HVA through
# libvirt, poisons, and hears QEMU's own MEMORY_FAILURE events); a peer's
# watch runs in the peer's chroot, linked against that suite's libvirt.so.
# Per guest, VMM and event one "HWLAB-MEASURE compare" line: what the inner
# kernel read from the bank (MCG_STATUS, MCi_STATUS, ADDR, MISC: from its
# mcelog lines, or its console's mce lines where it has no /dev/mcelog),
# what it did, whether the inner process got its SIGBUS and the guest lived,
# each VMM's own report in QEMU's MEMORY_FAILURE words
# (recipient:action:AR|AO), and times from the corrupt-pfn write on the
# outer VM's CLOCK_MONOTONIC: the injection as the VMM reported it, and the
# guest's first mce line and its Recovered line at the guest's OWN printk
# time, mapped to the outer clock (guest_ms), not at their arrival over the
# serial line (~40 ms a line; kept as recovered_serial_ms). A guest a VMM
# cannot boot is a measured outcome too ("noboot=" and its panic line), not
# a failure. tests/compare.py makes the table (make compare). The checks
# hold what must be true of each VMM; which guest survives is measured.
#
# Issue #24's two cases (_compare_dying.sh): dying, a lost 2 MiB of hugetlb
# guest RAM whose target dies of its SIGBUS (hwlab-vmm hugetlb-shared, whose
# salvage must cost 0 guest deaths, checked; hwlab-vmm private hugetlb and
# QEMU 11.1, measured), hwlab.compare_dying_events=N events per row (1..99;
# make test: 1, hwlab-vmm on our bzImage only; make compare: 20, QEMU 11.1
# and sid's guest too); and default, the time from the write to the guest's
# Recovered with the kernel's DEFAULT check_interval (hwlab-vmm --smca on,
# QEMU 11.1; our bzImage, sid's, trixie's and bookworm's stock kernels; make compare
# only). Options (the outer kernel's command line, HWLAB_APPEND):
#   hwlab.compare_events=N        late and early events (make test: 1)
#   hwlab.compare_huge_events=N   hugetlb events (make test: 1)
#   hwlab.compare_dying_events=N  dying events per row (1..99; make test: 1)
#   hwlab.compare_stock_all=1     every case on the stock guests too, the
#                                 QEMU dying row and the default case
#   hwlab.compare_cases=A,B,...   only these cases, of late, early, hugetlb,
#                                 outside, dying, default (default: all); a
#                                 case named here runs in full (its QEMU
#                                 rows too) as with compare_stock_all=1,
#                                 e.g. hwlab.compare_cases=dying,default
. /hwlab/scenarios/_lib.sh
# a request to a watch that died fails its write (EPIPE), not this script
trap '' PIPE
QEMU=/usr/bin/qemu-system-x86_64
LIBVIRT_CONF=/hwlab/lib/libvirt-qemu.conf
. /hwlab/lib/libvirt_embed.sh
# its helpers, a job each: the QEMUs through their libvirt, the measurement
# line, the events per VMM and guest, the hugetlb and heap cases, the checks
. /hwlab/scenarios/_compare_qemu.sh
. /hwlab/scenarios/_compare_measure.sh
. /hwlab/scenarios/_compare_events.sh
. /hwlab/scenarios/_compare_huge.sh
. /hwlab/scenarios/_compare_checks.sh
. /hwlab/scenarios/_compare_dying.sh

# Per case and VMM: make test's run takes 1 late and 1 early event per
# guest (each QEMU event is a whole QEMU boot under TCG, ~20 s idle), the
# 2 MiB hugetlb case and the VMM's own heap page once and on our bzImage
# only; make compare asks for more (hwlab.compare_events=,
# hwlab.compare_huge_events=) and for hugetlb and outside RAM on the stock
# guest too (hwlab.compare_stock_all=1)
events=1
huge_events=1
stock_all=0
dying_events=1
all_cases=late,early,hugetlb,outside,dying,default
cases=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	hwlab.compare_events=*) events=${arg#*=} ;;
	hwlab.compare_huge_events=*) huge_events=${arg#*=} ;;
	hwlab.compare_stock_all=*) stock_all=${arg#*=} ;;
	hwlab.compare_dying_events=*) dying_events=${arg#*=} ;;
	hwlab.compare_cases=*) cases=${arg#*=} ;;
	esac
done
case $dying_events in
[1-9] | [1-9][0-9]) ;;
*) echo "HWLAB-ERROR hwlab.compare_dying_events must be a whole number 1..99, not '$dying_events'"; exit 2 ;;
esac
for c in $(echo "$cases" | tr ',' ' '); do
	case ",$all_cases," in
	*",$c,"*) ;;
	*) echo "HWLAB-ERROR hwlab.compare_cases: '$c' is not a case (cases: $all_cases)"; exit 2 ;;
	esac
done
[ -n "$cases" ] || [ -z "$(grep -o 'hwlab.compare_cases=' /proc/cmdline)" ] ||
	{ echo "HWLAB-ERROR hwlab.compare_cases names no case (cases: $all_cases)"; exit 2; }
# named: the cases asked for by name (they run in full); want CASE: it runs
named=$cases
[ -n "$cases" ] || cases=$all_cases
want() { case ",$cases," in *",$1,"*) return 0 ;; esac; return 1; }
full() { [ "$stock_all" = 1 ] || case ",$named," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
echo "  compare cases: $cases; dying events per row: $dying_events"
check qemu-present "the comparison image carries QEMU 7.2 and its libraries" $QEMU --version
: >compare.lines
mkdir -p /dev/hugepages
mountpoint -q /dev/hugepages || mount -t hugetlbfs hugetlbfs /dev/hugepages

# --- the VMMs and guests of this boot ----------------------------------------
# One line per VMM with its versions (the table's header), or why it is missing
qemu_suites=
for suite in sid trixie; do
	if peer_ready $suite; then
		qemu_suites="$qemu_suites $suite"
		echo "HWLAB-MEASURE compare-vmm vmm=$(vmm_name $suite) suite=$suite $(qemu_versions $suite)driver=embed" |
			tee -a compare.lines
		# _lib.sh's peer_qemu, as other scenarios call it
		pv=$(peer_version $suite qemu-system-x86 | sed 's/^[0-9]*://; s/[+~].*//')
		expect $suite-peer-qemu 0 "QEMU emulator version $pv" peer_qemu $suite --version
	else
		echo "HWLAB-MEASURE compare-vmm vmm=qemu-$suite suite=$suite unavailable=$peer_reason" | tee -a compare.lines
		skip qemu-$suite "$peer_reason"
	fi
done
qemu_suites="$qemu_suites bookworm"
echo "HWLAB-MEASURE compare-vmm vmm=$(vmm_name bookworm) suite=bookworm $(qemu_versions bookworm)driver=embed" |
	tee -a compare.lines
echo "HWLAB-MEASURE compare-vmm vmm=hwlab-vmm suite=- version=this-tree" | tee -a compare.lines
for f in /hwlab/data/stock/*/version; do
	[ -f "$f" ] && echo "  stock kernel: $(cat "$f")"
done

# the guests: our bzImage, and sid's stock kernel (the same inner initramfs)
guest_list="ours"
if [ -f /hwlab/data/stock/sid/vmlinuz ]; then
	guest_list="$guest_list sid"
else
	skip stock-sid "no sid stock kernel in this image: $(cat /hwlab/data/stock/sid/unavailable 2>/dev/null)"
fi
[ "$stock_all" = 1 ] ||
	skip stock-sid-hugetlb-outside "the stock guest runs late and early kill here; hugetlb and outside RAM only in make compare (hwlab.compare_stock_all=1)"
# trixie's stock 6.12 and bookworm's 6.1, for the default case only (each
# its own poll path: neither acts on the deferred-error interrupt)
if want default && full default; then
	for gtag in trixie bookworm; do
		if [ -f /hwlab/data/stock/$gtag/vmlinuz ]; then
			guest_list="$guest_list $gtag"
		else
			skip stock-$gtag-default "no $gtag stock kernel in this image: $(cat /hwlab/data/stock/$gtag/unavailable 2>/dev/null)"
		fi
	done
fi
want dying && ! full dying &&
	skip dying-qemu-sid "the dying target runs on hwlab-vmm and our bzImage here (1 event per row); QEMU 11.1 and sid's guest in make compare (hwlab.compare_stock_all=1)"
want default && ! full default &&
	skip default-interval "the default check_interval case waits up to 30 s per event (the target's reread): make compare only (hwlab.compare_stock_all=1 or hwlab.compare_cases=default)"
for gtag in $guest_list; do
	if [ $gtag = ours ]; then
		LINUX_KERNEL=/hwlab/data/bzImage
		guest=bzImage
		echo "HWLAB-MEASURE compare-guest guest=$guest kernel=$LINUX_KERNEL version=ours" | tee -a compare.lines
	else
		LINUX_KERNEL=/hwlab/data/stock/$gtag/vmlinuz
		read -r gpkg gver gsuite </hwlab/data/stock/$gtag/version
		guest=$gtag-$gver
		echo "HWLAB-MEASURE compare-guest guest=$guest kernel=$LINUX_KERNEL version=$gpkg=$gver" | tee -a compare.lines
	fi
	echo "=== guest $guest: hwlab-vmm"
	run_hwlab
	for suite in $qemu_suites; do
		use_qemu $suite
		echo "=== guest $guest: $vmm ($suite)"
		run_qemu $suite
	done
done
echo 0 >/proc/sys/vm/memory_failure_early_kill
echo 0 >/proc/sys/vm/nr_hugepages
sed -n 's/.*starting up \(libvirt version: .*\)/  \1/p' /tmp/libvirt-*/log/qemu/hwlab-qemu.log | sort -u

compare_checks
want dying && dying_checks
finish
