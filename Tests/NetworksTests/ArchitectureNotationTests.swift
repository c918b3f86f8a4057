import Foundation
@testable import Networks
import TwoScaleCore
import XCTest

final class ArchitectureNotationTests: XCTestCase {
    func testParsesLayersAndShapes() throws {
        let a = try Architecture(parsing: "28x28x1-conv8k3p1-maxpool2-conv16k3s1-avgpool2-flatten-32-10", bias: true)
        XCTAssertEqual(a.stack.count, 6)
        let c1 = try XCTUnwrap(a.stack[0] as? ConvolutionLayer)
        XCTAssertEqual([c1.output.height, c1.output.width, c1.output.channels], [28, 28, 8])
        let p1 = try XCTUnwrap(a.stack[1] as? PoolingLayer)
        XCTAssertEqual(p1.kind, .max)
        XCTAssertEqual(p1.output, ImageShape(height: 14, width: 14, channels: 8))
        let c2 = try XCTUnwrap(a.stack[2] as? ConvolutionLayer)
        XCTAssertEqual(c2.output, ImageShape(height: 12, width: 12, channels: 16))
        XCTAssertEqual((a.stack[3] as? PoolingLayer)?.kind, .average)
        XCTAssertEqual(a.stack[4].inputSize, 6 * 6 * 16)
        XCTAssertEqual(a.sizes, [784, 6272, 1568, 2304, 576, 32, 10])
        XCTAssertEqual(a.parametricLayers, [0, 2, 4, 5])
        // 8·9 + 8, 16·72 + 16, 32·576 + 32, 10·32 + 10
        XCTAssertEqual(a.layerParameterCounts, [80, 0, 1168, 0, 18464, 330])
        XCTAssertEqual(a.classes, 10)
        // Canonical notation (flatten and default stride implicit) parses back to the same stack.
        XCTAssertEqual(a.notation, "28x28x1-conv8k3p1-maxpool2-conv16k3-avgpool2-32-10")
        XCTAssertEqual(try Architecture(parsing: a.notation, bias: true), a)
        XCTAssertEqual(try Architecture(parsing: "54-16-7").notation, "54-16-7")
        XCTAssertEqual(try Architecture(parsing: "54-16-7"), try Architecture(sizes: [54, 16, 7]))
        XCTAssertNotEqual(try Architecture(parsing: "4x4x1-conv2k3-maxpool2-3"), try Architecture(parsing: "4x4x1-conv2k3-avgpool2-3"))
    }

    /// Every bad term gets one message naming it.
    func testErrorsNameTheTerm() {
        let cases: [(String, String)] = [
            ("28x28x1-conv8k30-10", "term 2 'conv8k30': a 30×30 kernel is larger than the 28×28×1 input"),
            ("28x28x1-conv8k3-maxpool5-10", "term 3 'maxpool5': a 5×5 window does not divide the 26×26×8 input"),
            ("28x28x1-conv8k3s2-10", "term 2 'conv8k3s2': stride 2 does not tile"),
            ("28x28x1-conv8-10", "term 2 'conv8': a convolution is conv<F>k<K>"),
            ("28x28x1-conv8k3p3-10", "term 2 'conv8k3p3': filters, kernel and stride must be ≥ 1 and the padding between 0 and kernel − 1"),
            ("28x28-conv8k3-10", "term 1 '28x28': the input is an image shape HxWxC"),
            ("28x28x1-16-maxpool2-10", "term 3 'maxpool2': a convolution or pooling needs an image before it"),
            ("28x28x1-conv8k3-blah-10", "term 3 'blah': unknown term"),
            ("28x28x1-conv8k3", "term 2 'conv8k3': the last term is the softmax layer"),
            ("28x28x1-conv8k3-1", "term 3 '1': the last term is the softmax layer"),
            ("0x28x1-conv8k3-10", "term 1 '0x28x1': image sides and channels must be from 1"),
            ("28x28x1-flatten-flatten-10", "term 3 'flatten': flatten needs an image before it"),
        ]
        for (text, want) in cases {
            XCTAssertThrowsError(try Architecture(parsing: text, flag: "--student")) { e in
                let err = e as? TwoScaleError
                XCTAssertEqual(err?.kind, .usage, text)
                XCTAssertTrue(err?.message.hasPrefix("--student: '\(text)' is not allowed; ") == true, "\(text): \(String(describing: err))")
                XCTAssertTrue(err?.message.contains(want) == true, "\(text): \(err?.message ?? "")")
            }
        }
    }
}
