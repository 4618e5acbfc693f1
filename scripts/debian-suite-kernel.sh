# The kernel command of scripts/debian-suite.sh (sourced by it, after its
# private apt configuration is set up and its lock taken; not run alone):
# the suite's newest stock kernel image and the modules asked for, with
# their dependencies, in DIR/modules/ and their load order. Uses the caller's
# suite, mirror, cache, state, papt, pcache, candidate, die and unavailable;
# the module names are in "$@".

# modules kept beside the image, in DIR/modules/NAME.ko (see below)
kernel_modules=${*:-msr}
for mod in $kernel_modules; do
	case $mod in *[!a-z0-9_-]*) echo "debian-suite: error: '$mod' is not a module name" >&2; exit 2 ;; esac
done
command -v objcopy >/dev/null || die "objcopy not found (package binutils)"
meta=linux-image-amd64
[ -n "$(candidate $meta)" ] || unavailable "package $meta is not in Debian $suite ($mirror)"
# linux-image-amd64 depends on the versioned image package (signed or
# not: the image is the same kernel, and a bzImage boots either way).
# Since 7.x (sid) that package is a small one depending on
# linux-binary-VERSION, which holds /boot/vmlinuz-*.
kdeps() {
	pcache depends "$1" |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\|linux-binary-[0-9][^ ]*\).*/\1/p'
}
deps=$(kdeps "$meta")
pkg=${deps%%$'\n'*}
[ -n "$pkg" ] || unavailable "$meta in Debian $suite depends on no kernel image package"
# (its modules: in the image package up to 6.x; in 7.x the small one
# also depends on linux-modules-VERSION, which holds them)
modpkg=$(pcache depends "$pkg" | sed -n 's/^ *Depends: \(linux-modules-[0-9][^ ]*\).*/\1/p' |
	sed -n 1p)
deps=$(kdeps "$pkg")
binary=$(sed -n '/^linux-binary-/{p;q}' <<<"$deps")
[ -n "$binary" ] && pkg=$binary
[ -n "$modpkg" ] || modpkg=$pkg
ver=$(candidate "$pkg")
[ -n "$ver" ] || unavailable "package $pkg is not in Debian $suite ($mirror)"
dest=$cache/kernels/$pkg-$ver
# another module set than the guests' is kept apart, keyed by it
if [ "$kernel_modules" != msr ]; then
	dest=$dest-m$(printf '%s\n' $kernel_modules | LC_ALL=C sort -u | sha256sum | cut -c1-8)
fi
# (a cache from before the modules were kept, or their order, has no
# modules/order: fetched again)
if [ ! -f "$dest/vmlinuz" ] || [ ! -f "$dest/modules/order" ]; then
	(cd "$state/archives" && papt download "$pkg=$ver" >&2) ||
		unavailable "cannot download $pkg $ver from Debian $suite ($mirror)"
	deb=$state/archives/${pkg}_${ver//:/%3a}_amd64.deb
	[ -f "$deb" ] || die "apt downloaded no archive $deb for $pkg $ver"
	tmp=$(mktemp -d "$cache/kernels.XXXXXX")
	# /boot/vmlinuz-VERSION up to 6.x; /usr/lib/modules/VERSION/vmlinuz
	# in linux-binary-* (7.x)
	listing=$(dpkg-deb -c "$deb")
	image=$(grep -o '\./boot/vmlinuz-[^ ]*$\|\./usr/lib/modules/[^/]*/vmlinuz$' <<<"$listing" |
		sed -n 1p || true)
	[ -n "$image" ] || die "$pkg $ver (Debian $suite) holds no /boot/vmlinuz-* or /usr/lib/modules/*/vmlinuz"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "$image"
	mkdir -p "$tmp/out/modules"
	mv "$tmp/$image" "$tmp/out/vmlinuz"
	# the few modules a test guest loads (init: /lib/modules/hwlab/),
	# decompressed here (busybox insmod need not read .ko.xz): the msr
	# driver, /dev/cpu/N/msr (CONFIG_X86_MSR=m in Debian's config)
	moddeb=$deb
	if [ "$modpkg" != "$pkg" ]; then
		(cd "$state/archives" && papt download "$modpkg=$ver" >&2) ||
			unavailable "cannot download $modpkg $ver from Debian $suite ($mirror)"
		moddeb=$state/archives/${modpkg}_${ver//:/%3a}_amd64.deb
		[ -f "$moddeb" ] || die "apt downloaded no archive $moddeb for $modpkg $ver"
		listing=$(dpkg-deb -c "$moddeb")
	fi
	# every module file of the package, by module name (kvm-amd.ko is
	# kvm_amd: .modinfo's depends= uses the underscore form)
	grep -o '\./[^ ]*\.ko\(\.xz\|\.zst\|\.gz\)\?$' <<<"$listing" >"$tmp/ko-files" || true
	# want NAME: NAME's file unpacked and decompressed into out/modules,
	# its dependencies first, its name then appended to out/modules/order;
	# a module the package lacks is built in (or not built): init says so
	want() {
		local name=${1//-/_} path file dep
		grep -qx "$name" "$tmp/out/modules/seen" 2>/dev/null && return 0
		echo "$name" >>"$tmp/out/modules/seen"
		path=$(awk -v n="$name" '{ f = $0; sub(/.*\//, "", f); sub(/\.ko.*/, "", f)
			gsub(/-/, "_", f); if (f == n) { print; exit } }' "$tmp/ko-files")
		[ -n "$path" ] || return 0
		dpkg-deb --fsys-tarfile "$moddeb" | tar -x -C "$tmp" "$path"
		file=$tmp/out/modules/$name.ko
		case $path in
		*.xz) xz -dc "$tmp/$path" >"$file" ;;
		*.zst) zstd -qdc "$tmp/$path" >"$file" ;;
		*.gz) gzip -dc "$tmp/$path" >"$file" ;;
		*) cp "$tmp/$path" "$file" ;;
		esac
		# its .modinfo section: NUL-separated key=value strings
		for dep in $(objcopy -O binary --only-section=.modinfo "$file" /dev/stdout |
			tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' ' '); do
			want "$dep"
		done
		echo "$name" >>"$tmp/out/modules/order"
	}
	: >"$tmp/out/modules/order"
	for mod in $kernel_modules; do
		want "$mod"
	done
	rm -f "$tmp/out/modules/seen" "$tmp/ko-files"
	printf '%s %s %s\n' "$pkg" "$ver" "$suite" >"$tmp/out/version"
	mkdir -p "$cache/kernels"
	rm -rf "$dest"
	mv "$tmp/out" "$dest"
	rm -rf "$tmp"
	# the .deb holds all the modules (about 100 MB): the image and the
	# few above are all we keep
	rm -f "$deb" "$moddeb"
fi
echo "$dest/vmlinuz $pkg $ver"
