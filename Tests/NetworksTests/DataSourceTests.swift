import CZlib
import Foundation
@testable import Networks
import TwoScaleCore
@testable import TwoScaleFormats
import TwoScaleNumerics
import XCTest

final class DataSourceTests: XCTestCase {
    var dir: String = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "twoscale-data-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

    func write(_ name: String, _ text: String) throws -> String {
        let p = dir + "/" + name
        try text.write(toFile: p, atomically: true, encoding: .utf8)
        return p
    }

    func assertError(_ body: @autoclosure () throws -> Any, contains parts: [String], file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try body()
            XCTFail("no error (expected one mentioning \(parts))", file: file, line: line)
        } catch let e as TwoScaleError {
            for p in parts { XCTAssertTrue(e.message.contains(p), "'\(e.message)' should mention '\(p)'", file: file, line: line) }
        } catch { XCTFail("unexpected error \(error)", file: file, line: line) }
    }

    func testCSVWithAndWithoutHeader() throws {
        let a = try write("a.csv", "1,2,3\n4,5.5,-6e-1\n\n")
        let d = try DataSource.load("csv:" + a, samples: nil)
        XCTAssertEqual(d.inputs, Matrix([[1, 2, 3], [4, 5.5, -0.6]]))
        XCTAssertNil(d.labels)
        let b = try write("b.csv", "x, y ,label\r\n1,2,0\r\n3,4,2\r\n5,6,1\r\n")
        let e = try DataSource.load("csv:" + b, samples: 2, labels: .last)
        XCTAssertEqual(e.inputs, Matrix([[1, 2], [3, 4]]))
        XCTAssertEqual(e.labels, [0, 2])
        XCTAssertEqual(e.classes, 3)
        // Standardize: each column mean 0, sd 1; a constant column becomes 0.
        let c = try write("c.csv", "1,5\n2,5\n3,5\n")
        let s = try DataSource.load("csv:" + c, samples: nil, standardize: true)
        let sd = (2.0 / 3).squareRoot()
        XCTAssertEqual(s.inputs.data[0], -1 / sd, accuracy: 1e-12)
        XCTAssertEqual(s.inputs.data[2], 0, accuracy: 1e-12)
        XCTAssertEqual(s.inputs.data[4], 1 / sd, accuracy: 1e-12)
        XCTAssertEqual([s.inputs.data[1], s.inputs.data[3], s.inputs.data[5]], [0, 0, 0])
    }

    func testBadCSV() throws {
        assertError(try DataSource.load("csv:" + write("f.csv", "1,2\n3,4\n5\n"), samples: nil), contains: ["f.csv:3", "1 fields, expected 2"])
        assertError(try DataSource.load("csv:" + write("n.csv", "1,2\n3,nan\n"), samples: nil), contains: ["n.csv:2", "finite"])
        assertError(try DataSource.load("csv:" + write("i.csv", "1,2\n3,inf\n"), samples: nil), contains: ["i.csv:2", "finite"])
        assertError(try DataSource.load("csv:" + write("x.csv", "a,b\n1,2\n3,abc\n"), samples: nil), contains: ["x.csv:3", "'abc' is not a number"])
        assertError(try DataSource.load("csv:" + write("e.csv", "\n\n"), samples: nil), contains: ["e.csv", "empty"])
        assertError(try DataSource.load("csv:" + write("h.csv", "a,b\n"), samples: nil), contains: ["h.csv", "no data rows"])
        assertError(try DataSource.load("csv:" + write("l.csv", "1,2,0.5\n"), samples: nil, labels: .last), contains: ["l.csv:1", "whole number"])
        assertError(try DataSource.load("csv:" + write("m.csv", "1,2,-1\n"), samples: nil, labels: .last), contains: ["m.csv:1", "whole number"])
        assertError(try DataSource.load("csv:" + write("s.csv", "1,2\n3,4\n"), samples: 3), contains: ["\(Setting.samples)", "only 2 inputs"])
        assertError(try DataSource.load("csv:" + write("w.csv", "1,2\n"), samples: nil, inputSize: 3), contains: ["2 features", "input size is 3"])
        assertError(try DataSource.load("csv:" + dir + "/missing.csv", samples: nil), contains: ["missing.csv", "no such file"])
        assertError(try DataSource.load("parquet:x", samples: nil), contains: ["\(Setting.data)", "csv:PATH"])
        assertError(try DataSource.load("csv:" + write("z.csv", "1,2\n"), samples: 0), contains: ["\(Setting.samples)"])
    }

    /// An IDX image file (+ labels), raw bytes.
    func idx(images: [[UInt8]], rows: Int, cols: Int, magic: UInt32 = 0x0803, count: Int? = nil) -> Data {
        var d = Data()
        func be(_ v: UInt32) { d.append(contentsOf: [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]) }
        be(magic)
        be(UInt32(count ?? images.count)); be(UInt32(rows)); be(UInt32(cols))
        for im in images { d.append(contentsOf: im) }
        return d
    }

    func labelsFile(_ l: [UInt8]) -> Data {
        var d = Data([0, 0, 8, 1])
        let n = UInt32(l.count)
        d.append(contentsOf: [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)])
        d.append(contentsOf: l)
        return d
    }

    /// gzip written with zlib directly (gzopen/gzwrite), independent of `Gzip.compress`.
    func writeGzip(_ data: Data, to path: String) throws {
        guard let f = gzopen(path, "wb") else { throw TwoScaleError.failure("gzopen") }
        let bytes = [UInt8](data)
        XCTAssertEqual(Int(gzwrite(f, bytes, UInt32(bytes.count))), bytes.count)
        gzclose(f)
    }

    func testIDXRawAndGzipped() throws {
        let imgs: [[UInt8]] = [[0, 255, 51, 102, 0, 0], [255, 255, 0, 0, 1, 2], [9, 9, 9, 9, 9, 9]]
        let raw = idx(images: imgs, rows: 2, cols: 3)
        try raw.write(to: URL(fileURLWithPath: dir + "/im"))
        try labelsFile([3, 1, 4]).write(to: URL(fileURLWithPath: dir + "/lb"))
        try writeGzip(raw, to: dir + "/im.gz")
        try writeGzip(labelsFile([3, 1, 4]), to: dir + "/lb.gz")
        for (im, lb) in [("im", "lb"), ("im.gz", "lb.gz"), ("im", "lb.gz")] {
            let d = try DataSource.load("idx:\(dir)/\(im),\(dir)/\(lb)", samples: 2)
            XCTAssertEqual(d.inputs.rows, 2)
            XCTAssertEqual(d.inputs.cols, 6)
            XCTAssertEqual(d.inputs.data[1], 1)
            XCTAssertEqual(d.inputs.data[2], 0.2, accuracy: 1e-15)
            XCTAssertEqual(d.inputs.data[11], 2.0 / 255, accuracy: 1e-15)
            XCTAssertEqual(d.labels, [3, 1])
        }
        XCTAssertEqual(try DataSource.load("idx:\(dir)/im.gz", samples: nil).count, 3)
        // Gzip.compress round trip through the reader.
        try Gzip.compress(raw).write(to: URL(fileURLWithPath: dir + "/im2.gz"))
        XCTAssertEqual(try DataSource.load("idx:\(dir)/im2.gz", samples: nil).inputs, try DataSource.load("idx:\(dir)/im", samples: nil).inputs)
    }

    /// Images keep their shape: IDX files (3-dimensional: H×W×1; 4-dimensional: H×W×C), a CSV with
    /// `--shape`, synthetic inputs and teachers of an image model; an image model refuses flat or
    /// differently shaped inputs with a message naming both shapes, and an MLP takes any of them flat.
    func testImageShapes() throws {
        let imgs: [[UInt8]] = [[0, 255, 51, 102, 0, 0], [255, 255, 0, 0, 1, 2]]
        try idx(images: imgs, rows: 2, cols: 3).write(to: URL(fileURLWithPath: dir + "/im"))
        XCTAssertEqual(try DataSource.load("idx:\(dir)/im", samples: nil).shape, [2, 3, 1])
        // A colour IDX file: count × rows × cols × channels, magic 0x0804.
        var colour = Data([0, 0, 8, 4])
        for v: UInt32 in [2, 1, 2, 3] { colour.append(contentsOf: [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]) }
        colour.append(contentsOf: (0..<12).map { UInt8($0 * 20) })
        try colour.write(to: URL(fileURLWithPath: dir + "/colour"))
        let c = try DataSource.load("idx:\(dir)/colour", samples: nil, inputShape: ImageShape(height: 1, width: 2, channels: 3))
        XCTAssertEqual(c.shape, [1, 2, 3])
        XCTAssertEqual(c.inputs.data[4], 80.0 / 255, accuracy: 1e-15)  // image 0, column 1, channel 1
        let model = ImageShape(height: 2, width: 3, channels: 1)
        XCTAssertEqual(try DataSource.load("idx:\(dir)/im", samples: nil, inputShape: model).count, 2)
        assertError(try DataSource.load("idx:\(dir)/im", samples: nil, inputShape: ImageShape(height: 3, width: 2, channels: 1)),
                    contains: ["images are 2x3x1", "takes 3x2x1"])
        // CSV rows are flat until --shape says otherwise.
        let csv = try write("img.csv", "1,2,3,4,5,6\n7,8,9,10,11,12\n")
        assertError(try DataSource.load("csv:" + csv, samples: nil, inputShape: model), contains: ["flat vectors of 6 values", "\(Setting.shape) 2x3x1"])
        let shaped = try DataSource.load("csv:" + csv, samples: nil, inputShape: model, declaredShape: model)
        XCTAssertEqual(shaped.shape, [2, 3, 1])
        XCTAssertEqual(shaped.inputs.data, (1...12).map(Double.init))
        assertError(try DataSource.load("csv:" + csv, samples: nil, declaredShape: ImageShape(height: 2, width: 2, channels: 1)),
                    contains: ["\(Setting.shape)", "6 values per input", "holds 4"])
        assertError(try DataSource.load("idx:\(dir)/im", samples: nil, declaredShape: ImageShape(height: 3, width: 2, channels: 1)),
                    contains: ["\(Setting.shape)", "stores its images as 2x3x1"])
        XCTAssertEqual(try DataSource.parseShape("28x28x1"), ImageShape(height: 28, width: 28, channels: 1))
        for bad in ["28x28", "0x4x1", "axbxc", "28x28x1x1", ""] {
            assertError(try DataSource.parseShape(bad), contains: ["\(Setting.shape)", "HxWxC"])
        }
        // An MLP reads images flat.
        XCTAssertEqual(try DataSource.load("idx:\(dir)/im", samples: nil, inputSize: 6).features, 6)
        // Synthetic inputs take the model's shape; a CNN teacher's data carry the teacher's input shape.
        let gauss = try DataSource.load("synthetic:gaussian", samples: 3, inputSize: 6, inputShape: model)
        XCTAssertEqual(gauss.shape, [2, 3, 1])
        let teacher = try DataSource.load("synthetic:teacher:4x4x3-conv2k3-2", samples: 5, inputSize: 48,
                                          inputShape: ImageShape(height: 4, width: 4, channels: 3))
        XCTAssertEqual(teacher.shape, [4, 4, 3])
        XCTAssertEqual(teacher.labels?.count, 5)
        assertError(try DataSource.load("synthetic:teacher:4x4x3-conv2k3-2", samples: 5, inputSize: 48,
                                        inputShape: ImageShape(height: 8, width: 2, channels: 3)),
                    contains: ["images are 4x4x3", "takes 8x2x3"])
    }

    func testBadIDX() throws {
        let imgs: [[UInt8]] = [[1, 2, 3, 4], [5, 6, 7, 8]]
        try idx(images: imgs, rows: 2, cols: 2, magic: 0x0801).write(to: URL(fileURLWithPath: dir + "/magic"))
        assertError(try DataSource.load("idx:\(dir)/magic", samples: nil), contains: ["magic", "0x00000801", "0x00000803 or 0x00000804"])
        // Header says 3 images, only 2 present.
        let short = idx(images: imgs, rows: 2, cols: 2, count: 3)
        try short.write(to: URL(fileURLWithPath: dir + "/short"))
        assertError(try DataSource.load("idx:\(dir)/short", samples: nil), contains: ["short", "truncated", "image 3"])
        XCTAssertEqual(try DataSource.load("idx:\(dir)/short", samples: 2).count, 2)  // only what is asked for is read
        // A gzip stream cut in the middle.
        let big = idx(images: (0..<50).map { i in (0..<64).map { UInt8(($0 * 7 + i) & 0xFF) } }, rows: 8, cols: 8)
        let gz = try Gzip.compress(big)
        try gz.prefix(gz.count / 2).write(to: URL(fileURLWithPath: dir + "/cut.gz"))
        assertError(try DataSource.load("idx:\(dir)/cut.gz", samples: nil), contains: ["cut.gz", "truncated"])
        // Count mismatch between images and labels.
        try idx(images: imgs, rows: 2, cols: 2).write(to: URL(fileURLWithPath: dir + "/im"))
        try labelsFile([1, 2, 3]).write(to: URL(fileURLWithPath: dir + "/lb"))
        assertError(try DataSource.load("idx:\(dir)/im,\(dir)/lb", samples: nil), contains: ["3 labels", "2 images"])
        assertError(try DataSource.load("idx:\(dir)/im", samples: 5), contains: ["\(Setting.samples)", "only 2"])
    }

    func testFashionMNISTFirstImages() throws {
        let f = DataSource.fashionMNISTDirectory + "/train-images-idx3-ubyte.gz"
        try XCTSkipUnless(FileManager.default.fileExists(atPath: f), "dataset-fashion-mnist is not installed")
        let d = try DataSource.load("fashion-mnist", samples: 10)
        XCTAssertEqual(d.inputs.rows, 10)
        XCTAssertEqual(d.inputs.cols, 784)
        XCTAssertEqual(d.classes, 10)
        XCTAssertEqual(d.labels, [9, 0, 0, 3, 0, 2, 7, 2, 5, 5])  // the published first training labels
        XCTAssertTrue(d.inputs.data.allSatisfy { $0 >= 0 && $0 <= 1 })
        let t = try DataSource.load("fashion-mnist:test", samples: 3)
        XCTAssertEqual(t.labels, [9, 2, 1])
        assertError(try DataSource.load("fashion-mnist:val", samples: 3), contains: ["fashion-mnist:test"])
    }

    func testSynthetic() throws {
        let a = try DataSource.load("synthetic:gaussian", samples: 50, seed: 3, inputSize: 4)
        let b = try DataSource.load("synthetic:gaussian", samples: 10, seed: 3, inputSize: 4)
        XCTAssertEqual(Array(a.inputs.data.prefix(40)), b.inputs.data)  // prefix property
        let mean = a.inputs.data.reduce(0, +) / 200
        XCTAssertLessThan(abs(mean), 0.3)
        XCTAssertNotEqual(try DataSource.load("synthetic:gaussian", samples: 10, seed: 4, inputSize: 4).inputs, b.inputs)
        assertError(try DataSource.load("synthetic:gaussian", samples: nil, inputSize: 4), contains: ["\(Setting.samples)"])
        assertError(try DataSource.load("synthetic:gaussian", samples: 3), contains: ["input size"])
        let t = try DataSource.load("synthetic:teacher:5-4-3", samples: 200, seed: 1)
        XCTAssertEqual(t.inputs.cols, 5)
        XCTAssertEqual(t.classes, 3)
        XCTAssertEqual(t.labels?.count, 200)
        XCTAssertTrue(t.labels!.allSatisfy { (0..<3).contains($0) })
        assertError(try DataSource.load("synthetic:teacher:5-4-3", samples: 3, inputSize: 6), contains: ["5 features"])
        assertError(try DataSource.load("synthetic:teacher:5-4-3:swish", samples: 3), contains: ["activation"])
        // Labels follow the teacher's softmax: a very low temperature makes them the argmax.
        let arch = try Architecture(sizes: [5, 4, 3])
        let (cold, net) = DataSource.teacher(architecture: arch, activation: .tanh, samples: 100, seed: 2, temperature: 1e-9)
        let logits = net.forward(cold.inputs).logits
        for i in 0..<100 {
            let row = Array(logits.row(i))
            XCTAssertEqual(cold.labels?[i], row.firstIndex(of: row.max()!))
        }
        // At temperature 1 the label frequencies match the mean softmax probabilities.
        let (warm, net2) = DataSource.teacher(architecture: arch, activation: .tanh, samples: 4000, seed: 5)
        let p = Softmax.probabilities(net2.forward(warm.inputs).logits)
        for c in 0..<3 {
            let freq = Double(warm.labels!.filter { $0 == c }.count) / 4000
            let mp = (0..<4000).map { p[$0, c] }.reduce(0, +) / 4000
            XCTAssertEqual(freq, mp, accuracy: 0.03)
        }
    }
}
