import Foundation
import RandomStreams
import TwoScaleCore

/// Stage 1's term of `temperedLower` as its checkpoint (`lower-stage1`) keeps it: a rerun reads it in place of
/// running stage 1's sampler again.
struct LowerStageOne: Equatable {
    var first: [LogEstimate]
    var replicates: Int
    var decorrelation: Double?
    var sweeps: Int
    var independenceMoves: Bool

    static var name: String { "lower-stage1" }
    /// "TSLOWST1".
    static var magic: UInt64 { 0x5453_4C4F_5753_5431 }

    func encoded(fingerprint: [UInt64]) -> Data {
        var w = SnapshotWriter()
        for x in fingerprint { w.word(x) }
        w.doubles(first.map(\.value))
        w.doubles(first.map(\.variance))
        w.int(replicates)
        w.bool(decorrelation != nil)
        w.double(decorrelation ?? 0)
        w.int(sweeps)
        w.bool(independenceMoves)
        return w.data
    }

    init(first: [LogEstimate], replicates: Int, decorrelation: Double?, sweeps: Int, independenceMoves: Bool) {
        (self.first, self.replicates, self.decorrelation, self.sweeps, self.independenceMoves) = (first, replicates, decorrelation, sweeps, independenceMoves)
    }

    init(decoding data: Data, fingerprint: [UInt64], stops: Int) throws {
        var r = try SnapshotReader(data, name: Self.name)
        try r.expect(fingerprint)
        let (values, variances) = (try r.doubles(), try r.doubles())
        first = zip(values, variances).map { LogEstimate(value: $0, variance: $1) }
        replicates = try r.int()
        let measured = try r.bool(), d = try r.double()
        decorrelation = measured ? d : nil
        sweeps = try r.int()
        independenceMoves = try r.bool()
        guard values.count == stops, variances.count == stops, r.atEnd else { throw SnapshotReader.damaged(Self.name) }
    }
}

/// One (stage, replicate) task of `temperedLower` as its checkpoint (`lower-m-r`) keeps it: in its prefix's forward
/// pass, where that pass stands and the draws kept so far (`JointSMC.ForwardProgress`); among its islands, every
/// stop's draws, the stops whose islands are done and the generator; once done, what it returns.
struct LowerTask<Model: UniformStagedModel> {
    typealias Prefix = JointSMC<StagePrefix<Model>>
    enum Phase {
        case forward(Prefix.ForwardProgress)
        case islands(draws: [Prefix.Draws], done: [StopIslands], rng: Xoshiro256)
        case done([StopIslands])
    }

    var phase: Phase

    /// "TSLOWTK1".
    static var magic: UInt64 { 0x5453_4C4F_5754_4B31 }
    static func name(stage m: Int, replicate r: Int) -> String { "lower-\(m)-\(r)" }

    func encoded(fingerprint: [UInt64], prefix: Prefix) -> Data {
        var w = SnapshotWriter()
        for x in fingerprint { w.word(x) }
        switch phase {
        case .forward(let p):
            w.int(0)
            p.write(to: &w, sampler: prefix)
        case .islands(let draws, let done, let rng):
            w.int(1)
            prefix.write(draws, to: &w)
            Self.write(done, to: &w)
            w.generator(rng)
        case .done(let done):
            w.int(2)
            Self.write(done, to: &w)
        }
        return w.data
    }

    init(_ phase: Phase) { self.phase = phase }

    init(decoding data: Data, name: String, fingerprint: [UInt64], prefix: Prefix, stops: Int) throws {
        var r = try SnapshotReader(data, name: name)
        try r.expect(fingerprint)
        switch try r.int() {
        case 0:
            phase = .forward(try Prefix.ForwardProgress(from: &r, sampler: prefix))
        case 1:
            let draws = try prefix.readDraws(from: &r), done = try Self.readIslands(from: &r), g = try r.generator()
            guard draws.count == stops, done.count < stops else { throw SnapshotReader.damaged(name) }
            phase = .islands(draws: draws, done: done, rng: g)
        case 2:
            let done = try Self.readIslands(from: &r)
            guard done.count == stops else { throw SnapshotReader.damaged(name) }
            phase = .done(done)
        default:
            throw SnapshotReader.damaged(name)
        }
        guard r.atEnd else { throw SnapshotReader.damaged(name) }
    }

    static func write(_ islands: [StopIslands], to w: inout SnapshotWriter) {
        w.int(islands.count)
        for s in islands {
            w.double(s.log)
            w.double(s.noise)
            w.double(s.sized)
            w.int(s.inner)
            w.bool(s.capped)
        }
    }

    static func readIslands(from r: inout SnapshotReader) throws -> [StopIslands] {
        try (0..<r.count()).map { _ in
            StopIslands(log: try r.double(), noise: try r.double(), sized: try r.double(), inner: try r.int(), capped: try r.bool())
        }
    }
}

extension StagedSMC {
    /// What this run's numbers depend on besides the model's data, for the lower 2sED's checkpoints: a snapshot
    /// made with other settings is refused.
    func fingerprint(_ magic: UInt64, stops: [Double], _ more: [Int]) -> [UInt64] {
        var w = SnapshotWriter()
        w.word(magic)
        w.word(seed)
        w.ints([paths, inner, replicates, islandSweeps, stageOneSweeps, moveProposals, independenceMoves ? 1 : 0])
        w.double(box.lowerBound)
        w.double(box.upperBound)
        w.doubles(stops)
        w.int(model.parameterCount)
        w.ints(model.stageUnits.flatMap { [$0.count, $0.dimension] })
        w.ints(more)
        return w.words
    }
}
