#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package, end to end (docs/installing.md). Three CTest tests share one unpacked package:
#   test_package.sh build  builds the .deb with cpack from the build tree, checks its control data and file
#                          list, and unpacks it with dpkg -x into WORK/root (the fixture the others need)
#   test_package.sh run    runs WORK/root/opt/kforge/bin/kforge through the /usr/bin launchers with each
#                          documented way to find LibTorch, kforge-studio offscreen, and validates the desktop
#                          file, the AppStream metainfo and the man pages
#   test_package.sh sdk    builds examples/provider-plugin from the package against find_package(KForge) and
#                          loads it with the packaged kforge
# Environment (set by tests/packaging/CMakeLists.txt): KF_BUILD_DIR, KF_WORK, KF_VERSION, KF_TORCH_LIB,
# KF_TORCH_CMAKE_PREFIX, KF_GUI and KF_CMAKE_PACKAGE (ON/OFF). Exit 77 = skipped.
set -euo pipefail

mode=${1:?usage: test_package.sh build|run|sdk}
: "${KF_BUILD_DIR:?}" "${KF_WORK:?}" "${KF_VERSION:?}" "${KF_TORCH_LIB:?}" "${KF_GUI:?}"
root=$KF_WORK/root
failures=0

step() { echo "--- $*"; }
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
skip() { echo "SKIP: $*"; }
# expect_output DESCRIPTION PATTERN COMMAND...: the command succeeds and its output matches the grep -E pattern.
expect_output() {
    local what=$1 pattern=$2 out rc=0
    shift 2
    out=$("$@" 2>&1) || rc=$?
    if [ $rc -ne 0 ]; then
        fail "$what: exit $rc"
        printf '%s\n' "$out" | tail -20 >&2
    elif ! printf '%s\n' "$out" | grep -qE -- "$pattern"; then
        fail "$what: output lacks /$pattern/"
        printf '%s\n' "$out" | tail -20 >&2
    else
        echo "ok: $what"
    fi
}
# expect_failure DESCRIPTION PATTERN COMMAND...: the command fails and its output matches the pattern.
expect_failure() {
    local what=$1 pattern=$2 out rc=0
    shift 2
    out=$("$@" 2>&1) || rc=$?
    if [ $rc -eq 0 ]; then
        fail "$what: succeeded, expected a failure"
        printf '%s\n' "$out" | tail -20 >&2
    elif ! printf '%s\n' "$out" | grep -qE -- "$pattern"; then
        fail "$what: output lacks /$pattern/"
        printf '%s\n' "$out" | tail -20 >&2
    else
        echo "ok: $what"
    fi
}
finish() {
    if [ $failures -ne 0 ]; then
        echo "$failures check(s) failed" >&2
        exit 1
    fi
    echo "all checks passed"
}

# A user with nothing configured: no config files, an empty cache, no LibTorch on the loader's path.
clean_user_env() {
    local home=$KF_WORK/home-$mode
    rm -rf "$home"
    mkdir -p "$home/.config" "$home/.cache"
    export HOME=$home XDG_CONFIG_HOME=$home/.config KFORGE_CACHE=$home/.cache/kforge
    unset KFORGE_TORCH_LIB KFORGE_PROVIDER_PATH KFORGE_LAUNCHER_VERBOSE LD_LIBRARY_PATH
    export QT_QPA_PLATFORM=offscreen
}

build_package() {
    rm -rf "$KF_WORK"
    mkdir -p "$KF_WORK/out"
    step "cpack -G DEB (from the built tree; man pages are generated during the install step)"
    local start=$SECONDS
    if ! (cd "$KF_BUILD_DIR" && cpack -G DEB --config CPackConfig.cmake -B "$KF_WORK/out") >"$KF_WORK/cpack.log" 2>&1; then
        cat "$KF_WORK/cpack.log" >&2
        echo "FAIL: cpack failed (is the build complete? cmake --build $KF_BUILD_DIR)" >&2
        exit 1
    fi
    local debs=("$KF_WORK"/out/kforge_"$KF_VERSION"_*.deb)
    [ -f "${debs[0]}" ] || { echo "FAIL: no kforge_${KF_VERSION}_*.deb in $KF_WORK/out" >&2; exit 1; }
    local deb=${debs[0]}
    echo "built $(basename "$deb"): $(du -h "$deb" | cut -f1) in $((SECONDS - start)) s"

    step "control data"
    local info
    info=$(dpkg-deb --info "$deb")
    printf '%s\n' "$info" | grep -E '^ (Package|Version|Architecture|Depends|Recommends|Installed-Size):'
    printf '%s\n' "$info" | grep -qx " Package: kforge" || fail "Package is not kforge"
    printf '%s\n' "$info" | grep -qx " Version: $KF_VERSION" || fail "Version is not $KF_VERSION"
    printf '%s\n' "$info" | grep -q "^ Depends: .*libc6" || fail "Depends lacks libc6"
    if [ "$KF_GUI" = ON ]; then
        printf '%s\n' "$info" | grep -q "^ Depends: .*libqt6widgets6" || fail "Depends lacks libqt6widgets6"
    fi
    dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles 2>/dev/null | grep -qx /opt/kforge/etc/kforge.conf ||
        fail "conffiles does not list /opt/kforge/etc/kforge.conf"

    step "file list"
    dpkg-deb --contents "$deb" | awk '{print $6}' | sed 's#^\./#/#' >"$KF_WORK/files.txt"
    local expected=(
        /opt/kforge/bin/kforge /opt/kforge/lib/libkforge_engine.so /opt/kforge/etc/kforge.conf
        /opt/kforge/include/kforge/provider_sdk.h /opt/kforge/include/kforge/model_session.h
        /opt/kforge/include/kforge/version.h /opt/kforge/share/kforge/examples/provider-plugin/CMakeLists.txt
        /usr/bin/kforge /usr/bin/kforge-torch-setup
        /usr/share/man/man1/kforge.1.gz /usr/share/man/man1/kforge-torch-setup.1.gz
        /usr/share/doc/kforge/CHANGELOG.md /usr/share/doc/kforge/guide/README.md /usr/share/doc/kforge/copyright
        /usr/share/bash-completion/completions/kforge
    )
    if [ "${KF_CMAKE_PACKAGE:-ON}" = ON ]; then
        expected+=(/opt/kforge/lib/cmake/KForge/KForgeConfig.cmake /opt/kforge/lib/cmake/KForge/KForgeConfigVersion.cmake
            /opt/kforge/lib/cmake/KForge/KForgeTargets.cmake)
    fi
    if [ "$KF_GUI" = ON ]; then
        expected+=(
            /opt/kforge/bin/kforge-studio /usr/bin/kforge-studio /usr/share/man/man1/kforge-studio.1.gz
            /usr/share/applications/kforge-studio.desktop /usr/share/metainfo/io.kernelforge.Studio.metainfo.xml
            /usr/share/mime/packages/kforge-studio.xml
            /usr/share/icons/hicolor/scalable/apps/kforge-studio.svg
            /usr/share/icons/hicolor/48x48/apps/kforge-studio.png
            /usr/share/icons/hicolor/128x128/apps/kforge-studio.png
            /usr/share/icons/hicolor/256x256/apps/kforge-studio.png
        )
    fi
    local f
    for f in "${expected[@]}"; do
        grep -qxF "$f" "$KF_WORK/files.txt" || fail "the package lacks $f"
    done
    # LibTorch is found at run time, never bundled.
    if grep -E '/lib(torch|c10)[^/]*\.so' "$KF_WORK/files.txt"; then fail "the package bundles LibTorch"; fi
    echo "$(wc -l <"$KF_WORK/files.txt") entries checked"

    step "dpkg -x into $root"
    dpkg -x "$deb" "$root"
    ln -sf "$(basename "$deb")" "$KF_WORK/out/kforge.deb"

    step "RUNPATH: \$ORIGIN only, nothing of the build machine"
    local elf runpath
    for elf in "$root"/opt/kforge/bin/kforge "$root"/opt/kforge/bin/kforge-studio "$root"/opt/kforge/lib/libkforge_engine.so; do
        [ -e "$elf" ] || continue
        runpath=$(readelf -d "$elf" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
        case $runpath in
        '$ORIGIN/../lib' | '$ORIGIN') echo "ok: $(basename "$elf") RUNPATH $runpath" ;;
        *) fail "$(basename "$elf") has RUNPATH '$runpath'" ;;
        esac
    done
    if grep -rlF "$KF_TORCH_LIB" "$root" >/dev/null; then
        fail "files in the package name the build machine's LibTorch: $(grep -rlF "$KF_TORCH_LIB" "$root" | head -3)"
    fi
    finish
}

run_package() {
    [ -x "$root/usr/bin/kforge" ] || { echo "FAIL: $root is not unpacked (run the packaging_deb_build test)" >&2; exit 1; }
    clean_user_env
    local kforge=$root/usr/bin/kforge
    local site=${KF_TORCH_LIB%/torch/lib}
    local venv=${site%/lib/python3*/site-packages}

    step "the program itself needs LibTorch on the loader's path"
    expect_failure "opt/kforge/bin/kforge without LibTorch" "libtorch|libc10|cannot open shared object" \
        "$root/opt/kforge/bin/kforge" --version
    local cuda_libs
    cuda_libs=$(ls -d "$site"/nvidia/cu*/lib 2>/dev/null | tr '\n' ':')
    expect_output "opt/kforge/bin/kforge --version with LD_LIBRARY_PATH" "^kforge $KF_VERSION\$" \
        env LD_LIBRARY_PATH="$KF_TORCH_LIB:$cuda_libs" "$root/opt/kforge/bin/kforge" --version

    step "launcher: nothing configured"
    expect_failure "launcher without any setting" "cannot find LibTorch.*|kforge-torch-setup" "$kforge" --version

    step "launcher: KFORGE_TORCH_LIB"
    expect_output "kforge --version (KFORGE_TORCH_LIB)" "^kforge $KF_VERSION\$" \
        env KFORGE_TORCH_LIB="$KF_TORCH_LIB" "$kforge" --version
    expect_output "kforge modules builtin:tiny-gpt (KFORGE_TORCH_LIB)" \
        "blocks\.0\.attn +CausalSelfAttention .*scaled_dot_product_attention" \
        env KFORGE_TORCH_LIB="$KF_TORCH_LIB" "$kforge" modules builtin:tiny-gpt
    expect_output "KFORGE_TORCH_LIB naming the venv" "LibTorch $KF_TORCH_LIB \(from KFORGE_TORCH_LIB\)" \
        env KFORGE_TORCH_LIB="$venv" KFORGE_LAUNCHER_VERBOSE=1 "$kforge" --version
    expect_failure "KFORGE_TORCH_LIB naming a folder without LibTorch" "no LibTorch .* \(KFORGE_TORCH_LIB\)" \
        env KFORGE_TORCH_LIB="$KF_WORK" "$kforge" --version

    step "launcher: kforge.conf"
    local system_conf=$root/opt/kforge/etc/kforge.conf
    cp "$system_conf" "$KF_WORK/kforge.conf.orig"
    echo "torch_lib = $site" >>"$system_conf"
    expect_output "torch_lib in opt/kforge/etc/kforge.conf" "from torch_lib in $system_conf" \
        env KFORGE_LAUNCHER_VERBOSE=1 "$kforge" --version
    expect_output "kforge doctor (kforge.conf)" "^LibTorch +2\." "$kforge" doctor
    mkdir -p "$XDG_CONFIG_HOME/kforge"
    echo "torch_lib = $KF_WORK/nowhere" >"$XDG_CONFIG_HOME/kforge/kforge.conf"
    expect_failure "a wrong user kforge.conf wins over the system one" "nowhere.*torch_lib in $XDG_CONFIG_HOME" \
        "$kforge" --version
    expect_output "KFORGE_TORCH_LIB wins over kforge.conf" "from KFORGE_TORCH_LIB" \
        env KFORGE_TORCH_LIB="$KF_TORCH_LIB" KFORGE_LAUNCHER_VERBOSE=1 "$kforge" --version
    rm "$XDG_CONFIG_HOME/kforge/kforge.conf"
    cp "$KF_WORK/kforge.conf.orig" "$system_conf"

    step "launcher: the default venv of kforge-torch-setup"
    local torch_version
    torch_version=$(sed -n 's/^torch_version=//p' "$kforge")
    mkdir -p "$KFORGE_CACHE"
    ln -s "$venv" "$KFORGE_CACHE/torch-$torch_version"
    expect_output "the default venv \$KFORGE_CACHE/torch-$torch_version" "from the default venv" \
        env KFORGE_LAUNCHER_VERBOSE=1 "$kforge" --version
    expect_output "kforge-torch-setup --check" "^kforge $KF_VERSION\$" "$root/usr/bin/kforge-torch-setup" --check
    expect_output "kforge-torch-setup --help" "torch==$torch_version" "$root/usr/bin/kforge-torch-setup" --help
    rm -f "$KFORGE_CACHE/torch-$torch_version"
    expect_output "kforge-torch-setup --venv (a venv that has torch: nothing to download)" "^kforge $KF_VERSION\$" \
        "$root/usr/bin/kforge-torch-setup" --venv "$venv"
    grep -qx "torch_lib = $KF_TORCH_LIB" "$XDG_CONFIG_HOME/kforge/kforge.conf" ||
        fail "kforge-torch-setup did not record torch_lib in $XDG_CONFIG_HOME/kforge/kforge.conf"
    expect_output "the launcher follows the recorded torch_lib" "from torch_lib in $XDG_CONFIG_HOME" \
        env KFORGE_LAUNCHER_VERBOSE=1 "$kforge" --version
    expect_output "a symlink to the launcher" "^kforge $KF_VERSION\$" \
        bash -c "ln -sf '$kforge' '$KF_WORK/kf' && '$KF_WORK/kf' --version"

    if [ "$KF_GUI" = ON ]; then
        step "kforge-studio (offscreen)"
        expect_output "kforge-studio --version" "$KF_VERSION" "$root/usr/bin/kforge-studio" --version
        rm -f "$KF_WORK/studio.png"
        expect_output "kforge-studio builtin:tiny-gpt --screenshot" "" \
            "$root/usr/bin/kforge-studio" builtin:tiny-gpt --screenshot "$KF_WORK/studio.png"
        [ -s "$KF_WORK/studio.png" ] || fail "kforge-studio wrote no screenshot"

        step "desktop file and AppStream metainfo"
        local desktop=$root/usr/share/applications/kforge-studio.desktop
        local metainfo=$root/usr/share/metainfo/io.kernelforge.Studio.metainfo.xml
        if command -v desktop-file-validate >/dev/null; then
            expect_output "desktop-file-validate kforge-studio.desktop" "" desktop-file-validate "$desktop"
            [ -z "$(desktop-file-validate "$desktop")" ] || fail "desktop-file-validate: $(desktop-file-validate "$desktop")"
        else
            skip "desktop-file-validate is not installed (Debian package desktop-file-utils)"
        fi
        if command -v appstreamcli >/dev/null; then
            expect_output "appstreamcli validate --no-net" "" appstreamcli validate --no-net "$metainfo"
        else
            skip "appstreamcli is not installed (Debian package appstream)"
        fi
        grep -q "<release version=\"$KF_VERSION\" date=\"[0-9-]*\"" "$metainfo" ||
            fail "the metainfo's release is not $KF_VERSION with a date"
        grep -q '^Exec=kforge-studio' "$desktop" || fail "the desktop file does not run kforge-studio"
        grep -q '^Icon=kforge-studio$' "$desktop" || fail "the desktop file's icon is not kforge-studio"

        step "file types: .kfprof and .kfplan.json open in kforge-studio"
        local mime=$root/usr/share/mime/packages/kforge-studio.xml
        [ -s "$mime" ] || fail "no $mime"
        grep -q '^MimeType=application/x-kforge-profile;application/x-kforge-plan;$' "$desktop" ||
            fail "the desktop file does not claim the kforge MIME types"
        if command -v update-mime-database >/dev/null; then
            # A MIME database of the package's types alone: each glob must map to its type.
            mkdir -p "$KF_WORK/mime/packages"
            cp "$mime" "$KF_WORK/mime/packages/"
            update-mime-database "$KF_WORK/mime" || fail "update-mime-database refused $mime"
            grep -q ':application/x-kforge-profile:\*\.kfprof' "$KF_WORK/mime/globs2" ||
                fail "*.kfprof does not map to application/x-kforge-profile"
            grep -q ':application/x-kforge-plan:\*\.kfplan\.json' "$KF_WORK/mime/globs2" ||
                fail "*.kfplan.json does not map to application/x-kforge-plan"
        else
            skip "update-mime-database is not installed (Debian package shared-mime-info)"
        fi
    fi

    step "man pages"
    local page
    for page in "$root"/usr/share/man/man1/*.1.gz; do
        gzip -t "$page" || fail "$page is not gzip"
        if command -v groff >/dev/null; then
            local warnings
            warnings=$(zcat "$page" | groff -man -Tutf8 -ww -z 2>&1)
            [ -z "$warnings" ] || fail "groff warns about $(basename "$page"): $warnings"
        fi
        echo "ok: $(basename "$page")"
    done
    # Read whole first: `zcat | grep -q` under pipefail fails whenever grep finds the line before zcat has written a
    # page larger than the pipe's buffer (zcat then dies of SIGPIPE), as kforge.1 now is.
    local kforge_page
    kforge_page=$(zcat "$root/usr/share/man/man1/kforge.1.gz")
    grep -q '^\.SS "kforge plan validate"' <<<"$kforge_page" || fail "kforge.1 lacks the help of 'kforge plan validate'"
    grep -q "kforge $KF_VERSION" <<<"$kforge_page" || fail "kforge.1 lacks the version"
    finish
}

sdk_package() {
    [ "${KF_CMAKE_PACKAGE:-ON}" = ON ] ||
        { skip "this build makes no find_package(KForge) files (nlohmann_json is no installed CMake package)"; exit 77; }
    [ -f "$root/opt/kforge/lib/cmake/KForge/KForgeConfig.cmake" ] ||
        { echo "FAIL: $root is not unpacked or lacks the CMake package" >&2; exit 1; }
    local ccache_dir="" # the developer's, before HOME becomes the clean user's
    command -v ccache >/dev/null && ccache_dir=$(ccache --get-config cache_dir 2>/dev/null || true)
    clean_user_env
    : "${KF_TORCH_CMAKE_PREFIX:?}"
    local src=$root/opt/kforge/share/kforge/examples/provider-plugin
    local build=$KF_WORK/plugin-build
    rm -rf "$build"
    step "configure the example plugin with find_package(KForge) from the package"
    export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-8.0;9.0+PTX} # no GPU autodetection on GPU-less hosts
    # Through ccache when there is one, with paths below the work folder hashed relative to it: a later run (another
    # clone) reuses the object instead of compiling LibTorch's headers again.
    local launcher=()
    if command -v ccache >/dev/null; then
        launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
        export CCACHE_BASEDIR=$KF_WORK CCACHE_NOHASHDIR=true
        [ -z "$ccache_dir" ] || export CCACHE_DIR=$ccache_dir
    fi
    if ! cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
        -DCMAKE_PREFIX_PATH="$root/opt/kforge;$KF_TORCH_CMAKE_PREFIX" >"$KF_WORK/plugin-configure.log" 2>&1; then
        tail -30 "$KF_WORK/plugin-configure.log" >&2
        echo "FAIL: configuring the example plugin against the package" >&2
        exit 1
    fi
    grep -q "KForge_DIR:PATH=$root/opt/kforge/lib/cmake/KForge" "$build/CMakeCache.txt" ||
        fail "KForge was not found in the package: $(grep KForge_DIR "$build/CMakeCache.txt")"
    step "build it"
    if ! cmake --build "$build" >"$KF_WORK/plugin-build.log" 2>&1; then
        tail -30 "$KF_WORK/plugin-build.log" >&2
        echo "FAIL: building the example plugin against the package" >&2
        exit 1
    fi
    grep -q -- "-I$root/opt/kforge/include\|-isystem $root/opt/kforge/include" "$build/compile_commands.json" 2>/dev/null ||
        grep -rq "$root/opt/kforge/include" "$build/build.ninja" || fail "the plugin did not use the package's headers"
    step "load it with the packaged kforge"
    expect_output "kforge --provider-plugin libkforge_example_plugin.so providers" "^ExampleReluProvider +relu" \
        env KFORGE_TORCH_LIB="$KF_TORCH_LIB" "$root/usr/bin/kforge" \
        --provider-plugin "$build/libkforge_example_plugin.so" providers
    finish
}

command -v dpkg-deb >/dev/null || { skip "dpkg-deb is not installed (not a Debian system)"; exit 77; }
case $mode in
build) build_package ;;
run) run_package ;;
sdk) sdk_package ;;
*) echo "usage: test_package.sh build|run|sdk" >&2; exit 2 ;;
esac
