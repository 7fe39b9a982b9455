#!/bin/sh
# test-installed.sh — what `meson install` puts where, and an application
# built against it as a user would: pkg-config, the installed header and
# library, the installed plugin found by GStreamer.  TAP.
#
#   test-installed.sh BUILD_DIR CC APP_SOURCE MODELS_DIR SYSTEM_PLUGINS_DIR \
#       PREFIX LIBDIR INCLUDEDIR DATADIR
#
# The build is installed with --destdir into a temporary root.  Its .pc file
# names the configured prefix; the copy the application is built with names
# the prefix inside that root instead (what relocating an install means),
# every other path in it unchanged.
set -u
build=$1 cc=$2 app_src=$3 models=$4 system_plugins=$5
prefix=$6 libdir=$7 includedir=$8 datadir=$9
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
case $includedir in /*) ;; *) includedir=$prefix/$includedir ;; esac
case $datadir in /*) ;; *) datadir=$prefix/$datadir ;; esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }

if meson install -C "$build" --destdir "$root" --no-rebuild --quiet >"$tmp/install.log" 2>&1; then
  ok "meson install --destdir"
else
  not_ok "meson install --destdir"; sed 's/^/# /' "$tmp/install.log"
  echo "1..$n"; exit 1
fi

check "the plugin in libdir/gstreamer-1.0" test -f "$root$libdir/gstreamer-1.0/libgsthybridinfer.so"
check "libgsthybridmeta-1.0.so.0 in libdir" test -e "$root$libdir/libgsthybridmeta-1.0.so.0"
check "the header as <gst/hybrid/hybridmeta.h>" \
  test -f "$root$includedir/gstreamer-1.0/gst/hybrid/hybridmeta.h"
check "gsthybridmeta-1.0.pc" test -f "$root$libdir/pkgconfig/gsthybridmeta-1.0.pc"
check "GstHybrid-1.0.typelib" test -f "$root$libdir/girepository-1.0/GstHybrid-1.0.typelib"
check "GstHybrid-1.0.gir" test -f "$root$datadir/gir-1.0/GstHybrid-1.0.gir"

mkdir -p "$tmp/pc"
sed "s|^prefix=.*|prefix=$root$prefix|" "$root$libdir/pkgconfig/gsthybridmeta-1.0.pc" \
  >"$tmp/pc/gsthybridmeta-1.0.pc"
if flags=$(PKG_CONFIG_PATH=$tmp/pc pkg-config --cflags --libs gsthybridmeta-1.0 2>"$tmp/pc.log"); then
  ok "pkg-config --cflags --libs gsthybridmeta-1.0: $flags"
else
  not_ok "pkg-config gsthybridmeta-1.0"; sed 's/^/# /' "$tmp/pc.log"
fi
# Word splitting of the flags is the point here.
# shellcheck disable=SC2086
if $cc -o "$tmp/installed-app" "$app_src" $flags >"$tmp/cc.log" 2>&1; then
  ok "cc installed-app.c \$(pkg-config --cflags --libs gsthybridmeta-1.0)"
else
  not_ok "cc installed-app.c"; sed 's/^/# /' "$tmp/cc.log"
  echo "1..$n"; exit 1
fi
check "the application links the installed library" \
  sh -c "LD_LIBRARY_PATH='$root$libdir' ldd '$tmp/installed-app' | grep -q '$root$libdir/libgsthybridmeta-1.0.so.0'"

# GStreamer finds the installed plugin through GST_PLUGIN_PATH (any prefix
# but the system's, docs/ELEMENT.md); the system directory for videotestsrc.
if LD_LIBRARY_PATH=$root$libdir GST_PLUGIN_SYSTEM_PATH_1_0="" \
    GST_PLUGIN_PATH_1_0=$root$libdir/gstreamer-1.0:$system_plugins \
    GST_REGISTRY_1_0=$tmp/registry.bin GST_TRACERS="" \
    "$tmp/installed-app" "$models" >"$tmp/run.log" 2>&1; then
  ok "installed-app reads red from every buffer of the installed plugin"
  sed 's/^/# /' "$tmp/run.log"
else
  not_ok "installed-app on the installed plugin"; sed 's/^/# /' "$tmp/run.log"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
