import Foundation
import RandomStreams
import TwoScaleCLI
import TwoScaleCore
import XCTest

/// Every command and every file format fed invalid values and malformed files. Each case
/// must give exit status 2 (usage) or 1 (failure), one message on stderr containing the expected text
/// (the flag or file, and what is allowed), nothing on stdout, and no output file left behind.
///
/// Arguments may use `$D`, the fixture folder (see `makeFixtures`).
final class InputSweepTests: XCTestCase {
    struct Case {
        var args: [String]
        var status: Int32
        var message: String
        /// A path (under `$D`) that must not exist afterwards (an output that must not be written).
        var absent: String? = nil
        init(_ args: String, _ status: Int32, _ message: String, absent: String? = nil) {
            self.args = Self.split(args)
            self.status = status
            self.message = message
            self.absent = absent
        }
        /// Splits on spaces; `'…'` keeps spaces (for empty or spaced values).
        static func split(_ s: String) -> [String] {
            var out: [String] = [], cur = "", quoted = false, had = false
            for c in s {
                if c == "'" { quoted.toggle(); had = true; continue }
                if c == " " && !quoted {
                    if !cur.isEmpty || had { out.append(cur) }
                    cur = ""; had = false
                } else { cur.append(c) }
            }
            if !cur.isEmpty || had { out.append(cur) }
            return out
        }
    }

    static let toy = "toy --family constant --lambdas 4,0.01"
    static let fisherO = "fisher --arch 3-2 --fisher output --weights $D/w.json"
    static let ed = "ed --arch 3-4-3 --samples 3 --paths 2 --inner 2 --eps 0.1 --bootstrap 0 --estimator plain"
    static let train = "train --arch 2-8 --data csv:$D/lab.csv --labels last --batch 2 --epochs 1"
    static let gap = "gap --teacher 3-4-2 --student 3-4-2 --n 20 --trials 1 --epochs 1 --population 50 --random-draws 1"
    static let bound = "bound --n 1000 --family constant --lambdas 4,0.01"

    static let cases: [Case] = [
        // Root and argument-parser errors map to status 2.
        Case("bogus", 2, "bogus"),
        Case("toy --bogus", 2, "--bogus"),
        Case("toy --eps", 2, "--eps"),
        Case("toy --greedy-max 99999999999999999999999", 2, "--greedy-max"),
        Case("toy --greedy-max -1", 2, "--greedy-max"),
        Case("toy --normalize bogus", 2, "--normalize"),
        Case("toy --family bogus", 2, "--family"),
        // toy
        Case("toy --family constant", 2, "--lambdas"),
        Case("toy --family constant --lambdas=-1", 2, "--lambdas"),
        Case("toy --family constant --lambdas nan", 2, "--lambdas"),
        Case("toy --family constant --lambdas 1:2", 2, "--lambdas"),
        Case("toy --family constant --lambdas ''", 2, "--lambdas"),
        Case("toy --family constant --lambdas 4,,1", 2, "--lambdas"),
        Case("\(toy) --eps 0", 2, "--eps"),
        Case("\(toy) --eps 1", 2, "--eps"),
        Case("\(toy) --eps 0.1,1", 2, "--eps"),
        Case("\(toy) --eps 0.1,0", 2, "--eps"),
        Case("\(toy) --eps=-0.1", 2, "--eps"),
        Case("\(toy) --eps inf", 2, "--eps"),
        Case("\(toy) --eps 1e-3:1:5", 2, "--eps"),
        Case("\(toy) --eps 0:0.5:5", 2, "--eps"),
        Case("\(toy) --eps 0.5:0.1:5", 2, "--eps"),
        Case("\(toy) --eps 1e-3:0.5:1", 2, "--eps"),
        Case("\(toy) --eps 1e-3:0.5:2.5", 2, "--eps"),
        Case("\(toy) --eps 1e-3:0.5:99999999999", 2, "--eps"),
        Case("\(toy) --eps 1e-3:0.5", 2, "--eps"),
        Case("\(toy) --zeta 1", 2, "--zeta"),
        Case("\(toy) --zeta=-0.1", 2, "--zeta"),
        Case("\(toy) --zeta nan", 2, "--zeta"),
        Case("\(toy) --box 1:1", 2, "--box"),
        Case("\(toy) --box 1", 2, "--box"),
        Case("\(toy) --box a:b", 2, "--box"),
        Case("\(toy) --box 0:inf", 2, "--box"),
        Case("toy --family bernoulli --box 0.1:0.9", 2, "--dim"),
        Case("toy --family bernoulli --dim 0 --box 0.1:0.9", 2, "--dim"),
        Case("toy --family bernoulli --dim 2 --box 0:1", 2, "--box"),
        Case("toy --family bernoulli --dim 2 --box 0.5:1.5", 2, "--box"),
        Case("toy --family poisson --dim 2 --box=-1:1", 2, "--box"),
        Case("toy --family exponential --dim 2 --box 0:1", 2, "--box"),
        Case("toy --family bernoulli --dim 2 --box 0.1:0.9 --eps 1e-300 --zeta 0.9", 2, "--eps"),
        // fisher: flags
        Case("fisher --data csv:$D/ok3.csv", 2, "--arch"),
        Case("fisher --arch 3-1 --data csv:$D/ok3.csv", 2, "--arch"),
        Case("fisher --arch 0-2 --data csv:$D/ok3.csv", 2, "--arch"),
        Case("fisher --arch 3 --data csv:$D/ok3.csv", 2, "--arch"),
        Case("fisher --arch 3--2 --data csv:$D/ok3.csv", 2, "--arch"),
        Case("fisher --arch 3-99999999999 --data csv:$D/ok3.csv", 2, "--arch"),
        Case("fisher --arch 1000000-1000000-2 --fisher output --data synthetic:gaussian --samples 1", 2, "parameters"),
        Case("ed --arch 1000000-1000000-2 --samples 2 --paths 1 --inner 1", 2, "parameters"),
        Case("train --arch 1000000-1000000-2 --data synthetic:teacher:1000000-2 --samples 2 --batch 1", 2, "parameters"),
        Case("gap --teacher 1000000-2 --student 1000000-1000000-2 --n 2 --trials 1", 2, "--student"),
        Case("fisher --arch 3-2 --data csv:$D/ok3.csv", 2, "--sigma2"),
        Case("fisher --arch 3-2 --data csv:$D/ok3.csv --sigma2 0", 2, "--sigma2"),
        Case("fisher --arch 3-2 --data csv:$D/ok3.csv --sigma2 inf", 2, "--sigma2"),
        Case("fisher --arch 3-2 --data csv:$D/ok3.csv --sigma2 nan", 2, "--sigma2"),
        Case("fisher --arch 3-2 --data csv:$D/ok3.csv --sigma2 1 --noise-samples 0", 2, "--noise-samples"),
        Case("fisher --arch 3-4-2 --data csv:$D/ok3.csv --sigma2 1 --noise-samples 1000000000000", 2, "--noise-samples"),
        Case("ed --arch 3-4-2 --samples 3 --noise-samples 99999999999 --paths 1 --inner 1", 2, "--noise-samples"),
        Case("\(fisherO) --data csv:$D/ok3.csv --seed=-1", 2, "--seed"),
        Case("\(fisherO) --data csv:$D/ok3.csv --samples 0", 2, "--samples"),
        Case("\(fisherO) --data csv:$D/ok3.csv --samples 10", 2, "--samples"),
        Case("\(fisherO) --data csv:$D/ok3.csv --samples 999999999999999", 2, "--samples"),
        Case("\(fisherO) --data csv:$D/ok3.csv --labels first", 2, "--labels"),
        Case("\(fisherO) --data csv:$D/ok3.csv --labels last", 2, "--data"),
        Case("\(fisherO) --data csv:$D/ok3.csv --activation bogus", 2, "--activation"),
        Case("\(fisherO) --data csv:$D/ok3.csv --fisher bogus", 2, "--fisher"),
        Case("\(fisherO) --data bogus:x", 2, "--data"),
        Case("\(fisherO) --data csv:", 2, "--data"),
        Case("\(fisherO) --data idx:", 2, "--data"),
        Case("\(fisherO) --data idx:a,b,c", 2, "--data"),
        Case("\(fisherO) --data fashion-mnist:bogus", 2, "--data"),
        Case("\(fisherO) --data synthetic:gaussian", 2, "--samples"),
        Case("\(fisherO) --data synthetic:gaussian:1 --samples 2", 2, "--data"),
        Case("\(fisherO) --data synthetic:bogus --samples 2", 2, "--data"),
        Case("\(fisherO) --data synthetic:teacher: --samples 2", 2, "--data"),
        Case("\(fisherO) --data synthetic:teacher:3-x --samples 2", 2, "--data"),
        Case("\(fisherO) --data synthetic:teacher:3-2:bogus --samples 2", 2, "--data"),
        Case("\(fisherO) --data synthetic:gaussian --samples 999999999999", 2, "--samples"),
        Case("\(fisherO) --data synthetic:teacher:3-2 --samples 999999999999", 2, "--samples"),
        // fisher: CSV files
        Case("\(fisherO) --data csv:$D/missing.csv", 1, "missing.csv"),
        Case("\(fisherO) --data csv:$D/adir", 1, "adir"),
        Case("\(fisherO) --data csv:$D/empty.csv", 1, "empty.csv"),
        Case("\(fisherO) --data csv:$D/headeronly.csv", 1, "headeronly.csv"),
        Case("\(fisherO) --data csv:$D/bad.csv", 1, "bad.csv:3"),
        Case("\(fisherO) --data csv:$D/ragged.csv", 1, "ragged.csv:2"),
        Case("\(fisherO) --data csv:$D/nan.csv", 1, "nan.csv:2"),
        Case("\(fisherO) --data csv:$D/binary.csv", 1, "binary.csv"),
        Case("\(fisherO) --data csv:$D/features2.csv", 2, "input size is 3"),
        // fisher: weights JSON
        Case("\(fisherO.replacingOccurrences(of: "w.json", with: "missing.json")) --data csv:$D/ok3.csv", 1, "missing.json"),
        Case("\(fisherO.replacingOccurrences(of: "w.json", with: "adir")) --data csv:$D/ok3.csv", 1, "adir"),
        Case("\(fisherO.replacingOccurrences(of: "w.json", with: "wbad.json")) --data csv:$D/ok3.csv", 1, "wbad.json:1"),
        Case("\(fisherO.replacingOccurrences(of: "w.json", with: "wrag.json")) --data csv:$D/ok3.csv", 2, "row 2"),
        Case("\(fisherO.replacingOccurrences(of: "w.json", with: "winf.json")) --data csv:$D/ok3.csv", 1, "winf.json"),
        Case("\(fisherO.replacingOccurrences(of: "w.json", with: "wempty.json")) --data csv:$D/ok3.csv", 2, "wempty.json"),
        Case("\(fisherO.replacingOccurrences(of: "w.json", with: "wshape.json")) --data csv:$D/ok3.csv", 2, "wshape.json"),
        Case("\(fisherO.replacingOccurrences(of: "w.json", with: "wnokey.json")) --data csv:$D/ok3.csv", 1, "wnokey.json"),
        Case("\(fisherO.replacingOccurrences(of: "w.json", with: "wstring.json")) --data csv:$D/ok3.csv", 1, "wstring.json"),
        // fisher: IDX files
        Case("\(fisherO) --data idx:$D/missing.idx", 1, "missing.idx"),
        Case("\(fisherO) --data idx:$D/rand.idx", 1, "magic"),
        Case("\(fisherO) --data idx:$D/trunc.idx", 1, "truncated"),
        Case("\(fisherO) --data idx:$D/hugehdr.idx", 1, "hugehdr.idx"),
        Case("\(fisherO) --data idx:$D/hugecount.idx", 1, "--samples"),
        Case("\(fisherO) --data idx:$D/badgz.idx.gz", 1, "badgz.idx.gz"),
        Case("\(fisherO) --data idx:$D/img3.idx,$D/lab2.idx", 1, "lab2.idx"),
        Case("\(fisherO) --data idx:$D/img3.idx,$D/img3.idx", 1, "img3.idx"),
        Case("\(fisherO) --data idx:$D/img3.idx", 2, "input size is 3"),
        // ed
        Case("ed --arch 3-4-3 --samples 3 --paths 0", 2, "--paths"),
        Case("ed --arch 3-4-3 --samples 3 --paths 999999999999", 2, "--paths"),
        Case("ed --arch 3-4-3 --samples 3 --inner=-1", 2, "--inner"),
        Case("ed --arch 100-100-10 --samples 2 --paths 100000000 --inner 100000000 --eps 0.1 --store $D/huge", 2, "1 TiB", absent: "huge"),
        Case("\(ed) --threads 0", 2, "--threads"),
        Case("\(ed) --threads=-2", 2, "--threads"),
        Case("\(ed) --threads 99999", 2, "--threads"),
        Case("\(ed) --bootstrap 1", 2, "--bootstrap"),
        Case("\(ed) --bootstrap=-5", 2, "--bootstrap"),
        Case("\(ed) --bootstrap 100000000", 2, "--bootstrap"),
        Case("\(ed) --abbas-n 10", 2, "--abbas-n"),
        Case("\(ed) --abbas-n 1", 2, "--abbas-n"),
        Case("\(ed) --gamma 2", 2, "--gamma"),
        Case("\(ed) --gamma 0", 2, "--gamma"),
        Case("\(ed) --box 1:1", 2, "--box"),
        Case("\(ed) --box=-1e308:1e308", 1, "overflow"),
        Case("\(ed) --eps 1", 2, "--eps"),
        Case("\(ed) --zeta 1", 2, "--zeta"),
        Case("\(ed) --shard 1/2", 2, "--shard"),
        Case("\(ed) --shard 3/2 --store $D/sh", 2, "--shard", absent: "sh"),
        Case("\(ed) --shard 0/2 --store $D/sh", 2, "--shard", absent: "sh"),
        Case("\(ed) --shard x --store $D/sh", 2, "--shard", absent: "sh"),
        Case("\(ed) --shard 1/3 --store $D/sh", 2, "--shard", absent: "sh"),
        Case("\(ed) --resume", 2, "--resume"),
        // Convolutional networks: the geometry, the data's shape and the weights are checked before anything is written.
        Case("ed --arch 6x6x1-conv2k7-3 --data csv:$D/img36.csv --shape 6x6x1 --samples 2 --paths 2 --inner 2 --eps 0.1 --store $D/cnn", 2, "term 2 'conv2k7'", absent: "cnn"),
        Case("ed --arch 6x6x1-conv2k3-maxpool3-3 --data csv:$D/img36.csv --shape 6x6x1 --samples 2 --paths 2 --inner 2 --eps 0.1 --store $D/cnn", 2, "term 3 'maxpool3'", absent: "cnn"),
        Case("ed --arch 6x6x1-conv2k3s2-3 --data csv:$D/img36.csv --shape 6x6x1 --samples 2 --paths 2 --inner 2 --eps 0.1 --store $D/cnn", 2, "stride 2", absent: "cnn"),
        Case("ed --arch 6x6x1-conv2k3-3-maxpool2 --data csv:$D/img36.csv --shape 6x6x1 --samples 2 --paths 2 --inner 2 --eps 0.1 --store $D/cnn", 2, "term 4 'maxpool2'", absent: "cnn"),
        Case("ed --arch 6x6x1-conv2q3-3 --samples 2 --paths 2 --inner 2 --eps 0.1 --store $D/cnn", 2, "term 2 'conv2q3'", absent: "cnn"),
        Case("ed --arch 6x6x1-conv2k3-3 --data csv:$D/img36.csv --samples 2 --paths 2 --inner 2 --eps 0.1 --store $D/cnn", 2, "--shape 6x6x1", absent: "cnn"),
        Case("ed --arch 6x6x1-conv2k3-3 --data csv:$D/img36.csv --shape 4x9x1 --samples 2 --paths 2 --inner 2 --eps 0.1 --store $D/cnn", 2, "images are 4x9x1", absent: "cnn"),
        Case("ed --arch 6x6x1-conv2k3-3 --data csv:$D/ok3.csv --shape 6x6x1 --samples 2 --paths 2 --inner 2 --eps 0.1 --store $D/cnn", 2, "--shape", absent: "cnn"),
        Case("ed --arch 6x6x1-conv2k3-3 --data csv:$D/img36.csv --shape 6x6 --samples 2 --paths 2 --inner 2 --eps 0.1 --store $D/cnn", 2, "--shape", absent: "cnn"),
        Case("ed --arch 6x6x1-conv2k3-3 --estimator smc --samples 2 --paths 2 --inner 4 --eps 0.1", 2, "the smc estimator needs K from 4"),
        Case("fisher --arch 6x6x1-conv2k3-3 --fisher output --weights $D/w.json --data csv:$D/img36.csv --shape 6x6x1 --samples 2", 2, "the architecture 6x6x1-conv2k3-3 needs 2"),
        Case("train --arch 6x6x1-conv2k3-maxpool2-3 --data csv:$D/img36lab.csv --labels last --samples 2 --epochs 1 --weights-out $D/cnnw.json", 2, "--shape 6x6x1", absent: "cnnw.json"),
        Case("train --arch 6x6x1-conv2k3-maxpool2-3 --data csv:$D/img36lab.csv --labels last --shape 6x6x2 --samples 2 --epochs 1 --weights-out $D/cnnw.json", 2, "--shape", absent: "cnnw.json"),
        Case("\(ed) --store $D/store", 2, "--store"),
        Case("\(ed) --store $D/store --resume --seed 2", 2, "--seed"),
        Case("\(ed) --store $D/ok3.csv", 2, "--store"),
        Case("\(ed) --store $D/full", 2, "--store"),
        Case("\(ed) --store /proc/twoscale-store", 1, "/proc/twoscale-store"),
        Case("ed --arch 3-4-3 --samples 0", 2, "--samples"),
        Case("ed --arch 3-4-3 --data csv:$D/ok3.csv --samples 10", 2, "--samples"),
        // analyze (stores)
        Case("analyze $D/missing", 1, "missing: does not exist"),
        Case("analyze $D/adir", 1, "adir: is not a spectra store"),
        Case("analyze $D/ok3.csv", 1, "ok3.csv"),
        Case("analyze $D/store --eps 2", 2, "--eps"),
        Case("analyze $D/store --threads 0", 2, "--threads"),
        Case("analyze $D/store --abbas-n 1,2", 2, "--abbas-n"),
        Case("analyze $D/meta_garbage", 1, "meta_garbage/meta.json:1"),
        Case("analyze $D/meta_empty", 1, "meta_empty/meta.json"),
        Case("analyze $D/meta_format", 1, "twoscale-spectra/9"),
        Case("analyze $D/meta_negative", 1, "meta_negative/meta.json"),
        Case("analyze $D/meta_layers", 1, "meta_layers/meta.json"),
        Case("analyze $D/npy_trunc", 1, "npy_trunc/own_1.npy"),
        Case("analyze $D/npy_garbage", 1, "npy_garbage/own_1.npy"),
        Case("analyze $D/npy_shape", 1, "npy_shape/inner_2.npy"),
        Case("analyze $D/npy_nan", 1, "npy_nan/own_1.npy"),
        Case("analyze $D/npy_dtype", 1, "npy_dtype/own_1.npy"),
        Case("analyze $D/npy_dir", 1, "npy_dir/own_1.npy"),
        Case("analyze $D/unfinished", 1, "--resume"),
        Case("analyze $D/shard1", 1, "merge"),
        // empty file and folder names
        Case("\(ed) --store ''", 2, "--store"),
        Case("analyze ''", 2, "analyze"),
        Case("merge $D/shard1 --out ''", 2, "--out"),
        Case("\(train) --weights-out ''", 2, "--weights-out"),
        Case("\(train) --checkpoints ' '", 2, "--checkpoints"),
        Case("bound --n 1000 --store ''", 2, "--store"),
        Case("notebook $D/nb_ok.txt --out-dir ''", 2, "--out-dir"),
        Case("notebook ''", 2, "notebook"),
        // merge
        Case("merge --out $D/m", 2, "merge", absent: "m"),
        Case("merge $D/shard1", 2, "--out"),
        Case("merge $D/shard1 --out $D/m", 2, "2/2", absent: "m"),
        Case("merge $D/shard1 $D/shard1 --out $D/m", 1, "disjoint", absent: "m"),
        Case("merge $D/store --out $D/m", 1, "not a shard store", absent: "m"),
        Case("merge $D/missing --out $D/m", 1, "does not exist", absent: "m"),
        Case("merge $D/shard1 $D/shard2 --out $D/store", 2, "--out"),
        Case("merge $D/shard1 $D/shard2 --out $D/ok3.csv", 2, "--out"),
        Case("merge $D/shard1 $D/shard2 --out /proc/twoscale-merge", 1, "/proc/twoscale-merge"),
        // bound
        Case("bound --n 1000", 2, "--family"),
        Case("bound --n 1", 2, "--n"),
        Case("\(bound.replacingOccurrences(of: "1000", with: "0"))", 2, "--n"),
        Case("\(bound.replacingOccurrences(of: "1000", with: "1e300"))", 2, "--n"),
        Case("\(bound.replacingOccurrences(of: "1000", with: "2.5"))", 2, "--n"),
        Case("\(bound.replacingOccurrences(of: "1000", with: "x"))", 2, "--n"),
        Case("\(bound.replacingOccurrences(of: "1000", with: "2,1000")) --gamma 0.1", 2, "ε_n"),
        Case("\(bound) --gamma 1e-300", 2, "--n"),
        Case("\(bound) --gamma 0", 2, "--gamma"),
        Case("\(bound) --delta 0", 2, "--delta"),
        Case("\(bound) --delta 1", 2, "--delta"),
        Case("\(bound) --C=-1", 2, "--C"),
        Case("\(bound) --H 0", 2, "--H"),
        Case("\(bound) --K nan", 2, "--K"),
        Case("\(bound) --zeta 1", 2, "--zeta"),
        Case("\(bound) --store $D/store", 2, "--store"),
        Case("bound --n 1000 --store $D/missing", 1, "does not exist"),
        Case("bound --n 1000 --store $D/shard1", 1, "merge"),
        // train
        Case("train --arch 2-8 --data csv:$D/lab.csv --labels last --epochs 1", 2, "--batch"),
        Case("\(train) --epochs 0", 2, "--epochs"),
        Case("\(train) --batch 0", 2, "--batch"),
        Case("\(train) --lr 0", 2, "--lr"),
        Case("\(train) --lr nan", 2, "--lr"),
        Case("\(train) --momentum 1", 2, "--momentum"),
        Case("\(train) --optimizer bogus", 2, "--optimizer"),
        Case("\(train) --holdout 1", 2, "--holdout"),
        Case("\(train) --holdout 0.01", 2, "--holdout"),
        Case("\(train) --labels none", 2, "--data"),
        Case("train --arch 2-2 --data csv:$D/lab.csv --labels last --batch 2 --epochs 1", 2, "label 7"),
        Case("train --arch 2-8 --data csv:$D/labfrac.csv --labels last --batch 2 --epochs 1", 1, "labfrac.csv:1"),
        Case("train --arch 2-8 --data csv:$D/labneg.csv --labels last --batch 2 --epochs 1", 1, "labneg.csv:1"),
        Case("\(train) --data synthetic:gaussian --samples 4", 2, "--data"),
        Case("\(train) --weights-out $D/nodir/w.json", 1, "nodir", absent: "nodir"),
        Case("\(train) --weights-out $D/adir", 1, "adir"),
        Case("\(train) --weights-out /proc/twoscale-w.json", 1, "/proc"),
        Case("\(train) --checkpoints $D/ok3.csv", 1, "ok3.csv"),
        Case("\(train) --checkpoints /proc/twoscale-ck", 1, "/proc/twoscale-ck"),
        // gap
        Case("\(gap.replacingOccurrences(of: "--trials 1", with: "--trials 0"))", 2, "--trials"),
        Case("\(gap.replacingOccurrences(of: "--trials 1", with: "--trials 99999999999"))", 2, "--trials"),
        Case("\(gap.replacingOccurrences(of: "--n 20", with: "--n 1"))", 2, "--n"),
        Case("\(gap.replacingOccurrences(of: "--n 20", with: "--n 1e12"))", 2, "--n"),
        Case("\(gap.replacingOccurrences(of: "--population 50", with: "--population 1"))", 2, "--population"),
        Case("\(gap.replacingOccurrences(of: "--population 50", with: "--population 99999999999"))", 2, "--population"),
        Case("\(gap.replacingOccurrences(of: "--random-draws 1", with: "--random-draws=-1"))", 2, "--random-draws"),
        Case("\(gap.replacingOccurrences(of: "--student 3-4-2", with: "--student 4-4-2"))", 2, "--student"),
        Case("\(gap.replacingOccurrences(of: "--student 3-4-2", with: "--student 3-4-3"))", 2, "--student"),
        Case("\(gap) --temperature 0", 2, "--temperature"),
        Case("\(gap) --gamma 2", 2, "--gamma"),
        Case("\(gap) --box 1:0", 2, "--box"),
        Case("\(gap) --box=-1e300:1e300", 1, "--box"),
        Case("\(gap) --threads 0", 2, "--threads"),
        // notebook
        Case("notebook", 2, "<file>"),
        Case("notebook $D/missing.txt --out-dir $D/rep", 1, "missing.txt", absent: "rep/missing.md"),
        Case("notebook $D/adir --out-dir $D/rep", 1, "adir"),
        Case("notebook $D/nb_bin.txt --out-dir $D/rep", 1, "UTF-8", absent: "rep/nb_bin.md"),
        Case("notebook $D/nb_unclosed.txt --out-dir $D/rep", 1, "nb_unclosed.txt:2", absent: "rep/nb_unclosed.md"),
        Case("notebook $D/nb_badcmd.txt --out-dir $D/rep", 1, "nb_badcmd.txt:3", absent: "rep/nb_badcmd.md"),
        Case("notebook $D/nb_notts.txt --out-dir $D/rep", 1, "nb_notts.txt:3", absent: "rep/nb_notts.md"),
        Case("notebook $D/nb_badplot.txt --out-dir $D/rep", 1, "nb_badplot.txt:2", absent: "rep/nb_badplot.md"),
        Case("notebook $D/nb_baddir.txt --out-dir $D/rep", 1, "nb_baddir.txt:2", absent: "rep/nb_baddir.md"),
        Case("notebook $D/nb_quote.txt --out-dir $D/rep", 1, "nb_quote.txt:3", absent: "rep/nb_quote.md"),
        Case("notebook $D/nb_rec.txt --out-dir $D/rep", 1, "nb_rec.txt:3", absent: "rep/nb_rec.md"),
        Case("notebook $D/nb_ok.txt --out-dir $D/ok3.csv", 2, "--out-dir"),
        Case("notebook $D/nb_ok.txt --out-dir /proc/twoscale-rep", 1, "/proc/twoscale-rep"),
    ]

    func testEveryInvalidInputGivesOneClearMessage() async throws {
        let d = NSTemporaryDirectory() + "twoscale-sweep-\(UUID().uuidString)"
        try await Self.makeFixtures(d)
        defer { try? FileManager.default.removeItem(atPath: d) }
        for c in Self.cases {
            let args = c.args.map { $0.replacingOccurrences(of: "$D", with: d) }
            let label = args.joined(separator: " ").replacingOccurrences(of: d, with: "$D")
            let (status, out, err) = await runCLICapturingErrors(args)
            XCTAssertEqual(status, c.status, "\(label): stderr \(err)")
            XCTAssertEqual(out, "", "\(label): stdout must stay empty")
            XCTAssertTrue(err.contains(c.message), "\(label): stderr '\(err)' lacks '\(c.message)'")
            XCTAssertTrue(err.hasPrefix("twoscale: "), "\(label): one prefix for every message: \(err)")
            for bad in ["Fatal error", "Stack trace", "nan,", "Backtrace"] {
                XCTAssertFalse(err.contains(bad), "\(label): \(err)")
            }
            if let a = c.absent {
                XCTAssertFalse(FileManager.default.fileExists(atPath: d + "/" + a), "\(label): \(a) was written")
            }
            // Never a leftover atomic-write temporary anywhere in the fixtures.
            let leftovers = (FileManager.default.enumerator(atPath: d)?.allObjects as? [String] ?? []).filter { $0.contains(".tmp-") }
            XCTAssertEqual(leftovers, [], label)
        }
    }

    /// Help and version exit 0 with text on stdout.
    func testHelpAndVersionExitZero() async {
        for args in [["--help"], ["--version"], ["toy", "--help"], ["help", "ed"]] {
            let (status, out, err) = await runCLICapturingErrors(args)
            XCTAssertEqual(status, 0, "\(args): \(err)")
            XCTAssertFalse(out.isEmpty, "\(args)")
        }
    }

    // MARK: fixtures

    static func write(_ s: String, _ path: String) throws { try Data(s.utf8).write(to: URL(fileURLWithPath: path)) }
    static func write(_ b: [UInt8], _ path: String) throws { try Data(b).write(to: URL(fileURLWithPath: path)) }

    static func be32(_ x: UInt32) -> [UInt8] { [UInt8(x >> 24), UInt8(x >> 16 & 0xff), UInt8(x >> 8 & 0xff), UInt8(x & 0xff)] }

    static func makeFixtures(_ d: String) async throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: d + "/adir", withIntermediateDirectories: true)
        // CSV
        try write("1,2,3\n4,5,6\n", d + "/ok3.csv")
        try write("", d + "/empty.csv")
        try write("a,b,c\n", d + "/headeronly.csv")
        try write("a,b,c\n1,2,3\n3,x,4\n", d + "/bad.csv")
        try write("1,2,3\n4,5\n", d + "/ragged.csv")
        try write("1,2,3\nnan,5,6\n", d + "/nan.csv")
        try write([0xff, 0xfe, 0x00, 0x31, 0x2c], d + "/binary.csv")
        try write("1,2\n3,4\n", d + "/features2.csv")
        try write("1,2,0\n3,4,1\n5,6,7\n", d + "/lab.csv")
        try write("1,2,0.5\n3,4,1\n", d + "/labfrac.csv")
        try write("1,2,-1\n3,4,1\n", d + "/labneg.csv")
        // weights JSON for 3-2
        try write(#"{"weights": [[[1,2,3],[0,1,0]]]}"#, d + "/w.json")
        try write("nope", d + "/wbad.json")
        try write(#"{"weights": [[[1,2,3],[0,1]]]}"#, d + "/wrag.json")
        try write(#"{"weights": [[[1,2,3],[0,1,1e999]]]}"#, d + "/winf.json")
        try write(#"{"weights": []}"#, d + "/wempty.json")
        try write(#"{"weights": [[[1,2,3]]]}"#, d + "/wshape.json")
        try write(#"{"w": [[[1,2,3],[0,1,0]]]}"#, d + "/wnokey.json")
        try write(#"{"weights": [[["1",2,3],[0,1,0]]]}"#, d + "/wstring.json")
        // a 6×6×1 image per row (CNN cases), and the same rows with an integer label
        var rows: [String] = []
        for r in 0..<3 {
            let values: [String] = (0..<36).map { (j: Int) -> String in String(Double((r * 36 + j) % 7) / 7) }
            rows.append(values.joined(separator: ","))
        }
        try write(rows.joined(separator: "\n") + "\n", d + "/img36.csv")
        let labelled: [String] = rows.enumerated().map { (r: Int, row: String) -> String in row + ",\(r)" }
        try write(labelled.joined(separator: "\n") + "\n", d + "/img36lab.csv")
        // IDX
        var rng = Xoshiro256(seed: 7, stream: [1])
        try write((0..<100).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, d + "/rand.idx")
        try write(be32(0x803) + be32(3) + be32(1) + be32(3) + [1, 2, 3, 4], d + "/trunc.idx")
        try write(be32(0x803) + be32(0xffff_ffff) + be32(0xffff_ffff) + be32(0xffff_ffff) + [0], d + "/hugehdr.idx")
        try write(be32(0x803) + be32(0xffff_ffff) + be32(28) + be32(28) + [0], d + "/hugecount.idx")
        try write([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9], d + "/badgz.idx.gz")
        try write(be32(0x803) + be32(3) + be32(1) + be32(2) + [0, 255, 10, 20, 30, 40], d + "/img3.idx")
        try write(be32(0x801) + be32(2) + [0, 1], d + "/lab2.idx")
        // Stores: a finished one, a shard pair, an unfinished one, and damaged copies.
        let ed = ["ed", "--arch", "3-4-3", "--samples", "3", "--paths", "2", "--inner", "2", "--eps", "0.1", "--bootstrap", "0"]
        for (dir, extra) in [("store", [String]()), ("shard1", ["--shard", "1/2"]), ("shard2", ["--shard", "2/2"])] {
            let r = await runCLICapturingErrors(ed + ["--store", d + "/" + dir] + extra)
            precondition(r.status == 0, "fixture store: \(r.err)")
        }
        try fm.createDirectory(atPath: d + "/full", withIntermediateDirectories: true)
        try write("x", d + "/full/other.txt")
        try fm.createDirectory(atPath: d + "/unfinished/partial", withIntermediateDirectories: true)
        try fm.copyItem(atPath: d + "/store/meta.json", toPath: d + "/unfinished/meta.json")
        func damaged(_ name: String, _ edit: (String) throws -> Void) throws {
            try fm.copyItem(atPath: d + "/store", toPath: d + "/" + name)
            try edit(d + "/" + name)
        }
        let meta = try String(contentsOfFile: d + "/store/meta.json", encoding: .utf8)
        try damaged("meta_garbage") { try write("garbage", $0 + "/meta.json") }
        try damaged("meta_empty") { try write("", $0 + "/meta.json") }
        try damaged("meta_format") { try write(meta.replacingOccurrences(of: "twoscale-spectra/1", with: "twoscale-spectra/9"), $0 + "/meta.json") }
        try damaged("meta_negative") { try write(meta.replacingOccurrences(of: "\"paths\": 2", with: "\"paths\": -2"), $0 + "/meta.json") }
        try damaged("meta_layers") { try write(meta.replacingOccurrences(of: "[12, 12]", with: "[12, 13]"), $0 + "/meta.json") }
        let own = try Data(contentsOf: URL(fileURLWithPath: d + "/store/own_1.npy"))
        try damaged("npy_trunc") { try own.prefix(100).write(to: URL(fileURLWithPath: $0 + "/own_1.npy")) }
        try damaged("npy_garbage") { try write((0..<300).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, $0 + "/own_1.npy") }
        try damaged("npy_shape") { p in
            try fm.removeItem(atPath: p + "/inner_2.npy")
            try fm.copyItem(atPath: p + "/own_2.npy", toPath: p + "/inner_2.npy")
        }
        try damaged("npy_nan") { p in
            var b = [UInt8](own)
            let at = b.count - 8  // the last float64, little endian
            withUnsafeBytes(of: Double.nan.bitPattern.littleEndian) { for i in 0..<8 { b[at + i] = $0[i] } }
            try write(b, p + "/own_1.npy")
        }
        try damaged("npy_dtype") { p in
            let text = String(decoding: own, as: UTF8.self).replacingOccurrences(of: "<f8", with: "<i8")
            try write(text, p + "/own_1.npy")
        }
        try damaged("npy_dir") { p in
            try fm.removeItem(atPath: p + "/own_1.npy")
            try fm.createDirectory(atPath: p + "/own_1.npy", withIntermediateDirectories: false)
        }
        // Notebooks
        let toy = "twoscale toy --family constant --lambdas 4 --eps 0.1"
        try write("# T\n```twoscale\n\(toy)\n```\n", d + "/nb_ok.txt")
        try write("# T\n```twoscale\n\(toy)\n", d + "/nb_unclosed.txt")
        try write("# T\n```twoscale\ntwoscale toy --family constant --lambdas 4 --eps 2\n```\n", d + "/nb_badcmd.txt")
        try write("# T\n```twoscale\nls -la\n```\n", d + "/nb_notts.txt")
        try write("# T\n```twoscale plot x=nope y=d_zeta\n\(toy)\n```\n", d + "/nb_badplot.txt")
        try write("# T\n```twoscale bogus=1\n\(toy)\n```\n", d + "/nb_baddir.txt")
        try write("# T\n```twoscale\ntwoscale toy --family constant --lambdas \"4\n```\n", d + "/nb_quote.txt")
        try write("# T\n```twoscale\ntwoscale notebook x.txt\n```\n", d + "/nb_rec.txt")
        try write([0xff, 0xfe, 0x41], d + "/nb_bin.txt")
    }
}
