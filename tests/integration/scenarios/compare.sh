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

# Per case and VMM: make test's run takes 1 late and 1 early event per
# guest (each QEMU event is a whole QEMU boot under TCG, ~20 s idle), the
# 2 MiB hugetlb case and the VMM's own heap page once and on our bzImage
# only; make compare asks for more (hwlab.compare_events=,
# hwlab.compare_huge_events=) and for hugetlb and outside RAM on the stock
# guest too (hwlab.compare_stock_all=1)
events=1
huge_events=1
stock_all=0
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	hwlab.compare_events=*) events=${arg#*=} ;;
	hwlab.compare_huge_events=*) huge_events=${arg#*=} ;;
	hwlab.compare_stock_all=*) stock_all=${arg#*=} ;;
	esac
done
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
finish
