# The embedded libvirt QEMU driver (qemu:///embed?root=DIR), set up for a
# machine with no libvirt daemon and no libvirt users: the host tests'
# (tests/host/libvirt_tool.sh) and, inside the outer VM, the comparison's.
# Sourced; needs $LIBVIRT_CONF, the path of outer-qemu/libvirt-qemu.conf.

# embed_root_init DIR: DIR/etc/qemu.conf, the driver's only configuration
embed_root_init() {
	mkdir -p "$1/etc" && cp "$LIBVIRT_CONF" "$1/etc/qemu.conf"
}
# embed_uri DIR
embed_uri() { echo "qemu:///embed?root=$1"; }
# embed_needs_user: true when there is no libvirt-qemu user. libvirt 9.0
# looks up its compiled-in QEMU user before it reads qemu.conf (which
# says root) and refuses to start without it; libvirt-daemon-system's
# postinst would have made it.
embed_needs_user() { ! grep -q '^libvirt-qemu:' /etc/passwd; }
