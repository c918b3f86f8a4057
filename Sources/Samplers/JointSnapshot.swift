import Foundation
import RandomStreams
import TwoScaleCore

extension JointSMC {
    /// One replicate's progress as `checkpoints` keeps it: after a tempering step of its forward or reverse
    /// pass, the particles' coordinates, the weights and where the pass stands (`TemperingCursor`), the random
    /// walk's steps, the forward schedule, what it has collected and its generator's state; once it is done,
    /// what it returns. Each particle's stages and roots are recomputed from its coordinates, which gives the
    /// same values, so a continued replicate ends with the same bytes as one never stopped.
    struct Snapshot {
        enum Phase: Equatable {
            case forward
            /// The reverse pass, with the forward pass's proposals and acceptances (the ones reported).
            case reverse(forwardProposals: Int, forwardAccepted: Int)
            case done

            var name: String {
                switch self {
                case .forward: "forward pass"
                case .reverse: "reverse pass"
                case .done: "done"
                }
            }
        }

        var phase: Phase
        var cursor: TemperingCursor?
        var states: [Model.State]
        var h: [Double]
        var out: Replicate
        var schedule: [Double]
        var weights: [Double]
        var rng: Xoshiro256

        /// "TSJOINT1".
        static var magic: UInt64 { 0x5453_4A4F_494E_5431 }

        /// What the replicate's numbers depend on besides the model's data: a snapshot made with other settings is refused.
        static func fingerprint(_ sampler: JointSMC, replicate r: Int, stops: [Double]) -> [UInt64] {
            var w = SnapshotWriter()
            w.word(magic)
            w.word(sampler.seed)
            w.int(r)
            w.int(sampler.particles)
            w.int(sampler.sweeps)
            w.double(sampler.essFraction)
            w.double(sampler.box.lowerBound)
            w.double(sampler.box.upperBound)
            w.doubles(stops)
            w.int(sampler.model.parameterCount)
            w.ints(sampler.model.stageUnits.flatMap { [$0.count, $0.dimension] })
            return w.words
        }

        func encoded(sampler: JointSMC, replicate r: Int, stops: [Double]) -> Data {
            var w = SnapshotWriter()
            for x in Self.fingerprint(sampler, replicate: r, stops: stops) { w.word(x) }
            write(to: &w, sampler: sampler)
            return w.data
        }

        /// The snapshot after its fingerprint (`encoded`), also inside another's (`TemperedLower`'s prefix runs).
        func write(to w: inout SnapshotWriter, sampler: JointSMC) {
            switch phase {
            case .forward: w.int(0)
            case .reverse(let p, let a): w.int(1); w.int(p); w.int(a)
            case .done: w.int(2)
            }
            w.doubles(out.logZ)
            w.doubles(out.slope)
            w.doubles(out.reverseLogZ)
            w.ints([out.steps, out.proposals, out.accepted])
            if phase != .done, let cursor {
                cursor.write(to: &w)
                w.doubles(h)
                w.doubles(schedule)
                w.doubles(weights)
                w.generator(rng)
                sampler.write(states, to: &w)
            }
        }

        init(phase: Phase, cursor: TemperingCursor?, states: [Model.State], h: [Double], out: Replicate, schedule: [Double],
             weights: [Double], rng: Xoshiro256) {
            (self.phase, self.cursor, self.states, self.h, self.out) = (phase, cursor, states, h, out)
            (self.schedule, self.weights, self.rng) = (schedule, weights, rng)
        }

        /// Reads replicate r's snapshot `name`; one made with other settings is refused.
        init(decoding data: Data, name: String, sampler: JointSMC, replicate r: Int, stops: [Double]) throws {
            var reader = try SnapshotReader(data, name: name)
            try reader.expect(Self.fingerprint(sampler, replicate: r, stops: stops))
            try self.init(from: &reader, sampler: sampler)
            guard reader.atEnd else { throw SnapshotReader.damaged(name) }
        }

        /// Reads what `write(to:sampler:)` wrote.
        init(from reader: inout SnapshotReader, sampler: JointSMC) throws {
            let name = reader.name
            switch try reader.int() {
            case 0: phase = .forward
            case 1: phase = .reverse(forwardProposals: try reader.int(), forwardAccepted: try reader.int())
            case 2: phase = .done
            default: throw SnapshotReader.damaged(name)
            }
            out = Replicate(logZ: try reader.doubles(), slope: try reader.doubles(), reverseLogZ: try reader.doubles())
            let counts = try reader.ints()
            guard counts.count == 3 else { throw SnapshotReader.damaged(name) }
            (out.steps, out.proposals, out.accepted) = (counts[0], counts[1], counts[2])
            (cursor, states, h, schedule, weights, rng) = (nil, [], [], [], [], Xoshiro256(seed: 0))
            if phase != .done {
                let n = sampler.particles
                cursor = try TemperingCursor(from: &reader, count: n)
                (h, schedule, weights) = (try reader.doubles(), try reader.doubles(), try reader.doubles())
                rng = try reader.generator()
                guard h.count == sampler.model.stageUnits.count else { throw SnapshotReader.damaged(name) }
                states = try sampler.readStates(from: &reader, count: n)
            }
        }
    }

    /// Particles' states by their units' coordinates, preceded by their count.
    func write(_ states: [Model.State], to w: inout SnapshotWriter) {
        w.int(states.count)
        let units = model.stageUnits
        for state in states {
            for m in units.indices {
                for u in 0..<units[m].count {
                    for x in model.unitParameters(state, stage: m, unit: u) { w.double(x) }
                }
            }
        }
    }

    /// Reads `count` states written by `write(_:to:)`.
    func readStates(from reader: inout SnapshotReader, count n: Int) throws -> [Model.State] {
        let units = model.stageUnits
        guard try reader.count() == n else { throw SnapshotReader.damaged(reader.name) }
        return try (0..<n).map { _ in
            var state = model.emptyState()
            for m in units.indices {
                for u in 0..<units[m].count {
                    let x = try (0..<units[m].dimension).map { _ in try reader.double() }
                    model.setUnit(&state, stage: m, unit: u, parameters: x)
                }
            }
            return state
        }
    }
}
