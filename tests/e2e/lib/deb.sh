# shellcheck shell=bash
# deb.sh - sourced by the e2e suites that need the Debian package
# (deb_package.sh, container_rootfs.sh).  Not a test itself.
#
# e2e_deb_lock: take the lock that serialises every suite using dpkg or the
# package's build directory (the suites of two releases run side by side).
# e2e_build_deb LOG: build the package (RelWithDebInfo, prefix /usr, no
# sanitizers) in SLUICE_DEB_BUILD (default <repo>/build-deb), incrementally;
# sets $deb to its path, or "" when it could not be built (the build's
# output is in LOG).

e2e_deb_lock() {
    exec 9>/tmp/sluice-e2e-deb.lock
    flock 9
}

e2e_build_deb() {
    local log=$1 version debbuild=${SLUICE_DEB_BUILD:-$REPO/build-deb}
    version=$(sed -n 's/^project(sluice VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
    deb=""
    if cmake -S "$REPO" -B "$debbuild" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
        -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_BENCH=OFF >"$log" 2>&1 &&
        cmake --build "$debbuild" -j "$(nproc)" >>"$log" 2>&1 &&
        (cd "$debbuild" && rm -f ./*.deb && cpack -G DEB) >>"$log" 2>&1; then
        deb=$(ls "$debbuild"/sluice_"$version"_*.deb 2>/dev/null | head -n1 || true)
    fi
}
