# pack_peer of outer-qemu/mkinitramfs.sh (sourced by it; not run alone):
# one newer suite's QEMU and libvirt as a chroot of the comparison image,
# with the libraries its sysroot's own loader finds for them. Uses the
# caller's root, peers, libvirt_tool and die.

# pack_peer SUITE SYSROOT: the chroot /hwlab/peers/SUITE (see PEERS above)
pack_peer() {
	local suite=$1 sr=$2 dest=$root/hwlab/peers/$1 ldso libpath f
	ldso=$sr/usr/lib64/ld-linux-x86-64.so.2
	[ -x "$ldso" ] || ldso=$sr/lib64/ld-linux-x86-64.so.2
	[ -x "$ldso" ] || die "peer $suite: no ld-linux-x86-64.so.2 in $sr"
	libpath=$sr/usr/lib/x86_64-linux-gnu:$sr/lib/x86_64-linux-gnu
	mkdir -p "$dest"/{dev,proc,sys,tmp,run,etc,hwlab/data,usr/bin}
	# the merged-/usr links (bin, lib, lib64, sbin -> usr/...), so that
	# PT_INTERP /lib64/ld-linux-x86-64.so.2 resolves inside the chroot
	# (trixie's base-files ships them; sid's closure has no base-files)
	for f in bin lib lib64 sbin; do
		ln -s "usr/$f" "$dest/$f"
	done
	# peer_copy PATH: the sysroot's file at the same path in the chroot
	# (a path under /lib64, /lib, ... is the one under /usr there)
	peer_copy() {
		local rel=$1
		case $rel in /bin/* | /lib/* | /lib64/* | /sbin/*) rel=/usr$rel ;; esac
		[ -e "$sr$rel" ] || die "peer $suite: $rel is not in $sr"
		mkdir -p "$dest$(dirname "$rel")"
		cp -L "$sr$rel" "$dest$rel"
	}
	# peer_elf FILE REL: FILE at REL, and the libraries it needs
	peer_elf() {
		local out lib
		mkdir -p "$dest$(dirname "$2")"
		install -m 0755 "$1" "$dest$2"
		out=$("$ldso" --library-path "$libpath" --list "$1") ||
			die "peer $suite: $ldso --list $1 failed: $out"
		[[ $out != *'not found'* ]] || die "peer $suite: $1 needs a library $sr lacks: $out"
		# "libx.so => /sysroot/usr/lib/.../libx.so (addr)", and the
		# interpreter by its own name "/lib64/ld-linux-x86-64.so.2 (addr)"
		for lib in $(grep -o '/[^ ]*' <<<"$out"); do
			case $lib in
			"$sr"/*) peer_copy "${lib#"$sr"}" ;;
			*) peer_copy "$lib" ;;
			esac
		done
	}
	peer_elf "$sr/usr/bin/qemu-system-x86_64" /usr/bin/qemu-system-x86_64
	for f in /usr/share/seabios/bios-256k.bin /usr/share/qemu/linuxboot_dma.bin /usr/share/qemu/kvmvapic.bin; do
		peer_copy "$f"
	done
	# (trixie's and sid's QEMU have TCG built in: no module)
	f=/usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so
	if [ -e "$sr$f" ]; then
		peer_elf "$sr$f" "$f"
	fi
	f=/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so
	[ -e "$sr$f" ] || die "peer $suite: no libvirt QEMU driver in $sr (libvirt-daemon-driver-qemu)"
	peer_elf "$sr$f" "$f"
	# the driver's file writer for a save (virDomainSave pipes QEMU's
	# stream through it; without it every save fails, a poisoned one too)
	f=/usr/lib/libvirt/libvirt_iohelper
	[ -x "$sr$f" ] || die "peer $suite: no $f in $sr (libvirt-daemon-common)"
	peer_elf "$sr$f" "$f"
	peer_elf "$(readlink -f "$sr/usr/lib/x86_64-linux-gnu/libvirt-qemu.so.0")" /usr/lib/x86_64-linux-gnu/libvirt-qemu.so.0
	peer_elf "$libvirt_tool" /usr/bin/hwpoison-guest
	[ -d "$sr/usr/share/libvirt/cpu_map" ] || die "peer $suite: no /usr/share/libvirt/cpu_map in $sr"
	mkdir -p "$dest/usr/share/libvirt"
	cp -r "$sr/usr/share/libvirt/cpu_map" "$dest/usr/share/libvirt/"
	cp "$root/etc/passwd" "$root/etc/group" "$dest/etc/"
	grep -E '^(suite|qemu-system-x86|libvirt0)=' "$peers/$suite/versions" >"$dest/versions"
}
