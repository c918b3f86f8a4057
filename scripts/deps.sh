#!/usr/bin/env bash
# Installs the Debian packages twoscale needs, if any is missing (sourced by setup.sh and test.sh).
#   libgsl-dev        GSL: quadrature, root finding (linked against OpenBLAS's CBLAS, not gslcblas)
#   libopenblas-dev   optimised BLAS + LAPACK (dsyevd) for every matrix product and eigenvalue
#   zlib1g-dev        gzip-compressed IDX files
#   dataset-fashion-mnist   the real Fashion-MNIST files under /usr/share/datasets/fashion-mnist
#   openmpi-bin, libopenmpi-dev   Open MPI: mpirun, and libmpi.so that `ed` loads at run time under mpirun
#                     (twoscale builds and runs without it; only MPI runs need it)
#   slurm-wlm         only with TWOSCALE_TEST_SLURM=1 (CI): a real job array on a private single-node SLURM
#                     in the tests (scripts/slurm-local.sh); it brings system services, so not by default
#   python3-numpy     only for the comparison benchmark script and NumPy-readability checks (optional)
#   python3-sklearn   only for the measure study (setup.sh, reproduce.sh): scikit-learn's bundled digits,
#                     exported to IDX under data/digits by scripts/export-digits.py (twoscale_install_study_data)
twoscale_install_deps() {
    local pkgs=(libgsl-dev libopenblas-dev zlib1g-dev dataset-fashion-mnist openmpi-bin libopenmpi-dev)
    if [ "${TWOSCALE_TEST_SLURM:-0}" = 1 ]; then pkgs+=(slurm-wlm); fi
    local missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "twoscale: installing ${missing[*]}" >&2
        local sudo=""
        [ "$(id -u)" -ne 0 ] && sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    if ! command -v swift >/dev/null 2>&1; then
        echo "twoscale: the Swift toolchain (6.1 or later) is required; put swift on PATH" >&2
        return 1
    fi
}

# The study's second data set (docs/STUDY.md): scikit-learn's digits as IDX files under data/digits.
twoscale_install_study_data() {
    if [ -f data/digits/test-labels-idx1-ubyte.gz ]; then return 0; fi
    if ! dpkg-query -W -f='${Status}' python3-sklearn 2>/dev/null | grep -q "install ok installed"; then
        echo "twoscale: installing python3-sklearn (the digits data set of the measure study)" >&2
        local sudo=""
        [ "$(id -u)" -ne 0 ] && sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-sklearn >/dev/null
    fi
    /usr/bin/python3 scripts/export-digits.py data/digits
}
