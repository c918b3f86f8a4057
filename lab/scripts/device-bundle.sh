#!/usr/bin/env bash
# Lab: makes .devbin/ (ignored through .git/info/exclude) for lab/scripts/device-scaling.sh: release builds
# of this checkout (twoscale-main) and of branch lab/parallel-trace rebased on it (twoscale-trace, given as
# $1; the main build is used when absent), every shared library they link except libc, libm and the
# loader, and the first 2000 Fashion-MNIST training images with their labels.
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx "/.devbin/" .git/info/exclude || echo "/.devbin/" >> .git/info/exclude
rm -rf .devbin /tmp/devbin && mkdir -p .devbin/fm /tmp/devbin/lib
swift build -c release
cp .build/release/twoscale /tmp/devbin/twoscale-main
cp "${1:-.build/release/twoscale}" /tmp/devbin/twoscale-trace
ldd /tmp/devbin/twoscale-main | awk '/=>/ {print $3}' | grep -v -E '/(libc|libm|ld-linux[^/]*)\.so' | xargs -I{} cp -L {} /tmp/devbin/lib/
(cd /tmp/devbin && tar cf - lib twoscale-main twoscale-trace | xz -T2 -4 > "$OLDPWD/.devbin/bundle.tar.xz")
python3 - <<'PY'
import gzip, struct
d = '/usr/share/datasets/fashion-mnist/'
n = 2000
im = gzip.open(d + 'train-images-idx3-ubyte.gz').read()
magic, _, r, c = struct.unpack('>IIII', im[:16])
gzip.open('.devbin/fm/train-images-idx3-ubyte.gz', 'wb').write(struct.pack('>IIII', magic, n, r, c) + im[16:16 + n * r * c])
lb = gzip.open(d + 'train-labels-idx1-ubyte.gz').read()
magic, _ = struct.unpack('>II', lb[:8])
gzip.open('.devbin/fm/train-labels-idx1-ubyte.gz', 'wb').write(struct.pack('>II', magic, n) + lb[8:8 + n])
PY
du -sh .devbin
