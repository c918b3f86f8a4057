import Foundation
@testable import Samplers
import TestSupport
import Testing
import RandomStreams
import ToyModels
import TwoScaleCore

/// Joint tempering's checkpoints (`JointSMC.checkpoints`): a run stopped at any save, in the forward pass, the
/// reverse pass or between samplers, and continued from what was saved, ends with the same numbers, bit for
/// bit, as a run never stopped; saving changes nothing; a snapshot of another run, or a damaged one, is refused.
@Suite struct JointCheckpointTests {
    let model: LayeredToy
    let stops: [Double] = [2, 20]

    init() throws {
        model = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 3)
    }

    func sampler(seed: UInt64 = 7, _ store: MemoryCheckpoints?) throws -> JointSMC<LayeredToy> {
        var j = try JointSMC(model: model, box: model.box, seed: seed, particles: 12, replicates: 2)
        j.checkpoints = store
        return j
    }

    func same(_ a: JointSMC<LayeredToy>.Result, _ b: JointSMC<LayeredToy>.Result, _ note: String) {
        #expect(a.logZ == b.logZ, "\(note)")
        #expect(a.reverseLogZ == b.reverseLogZ, "\(note)")
        #expect(a.slope == b.slope, "\(note)")
        #expect(a.steps == b.steps && a.proposals == b.proposals && a.accepted == b.accepted, "\(note)")
    }

    func phase(_ save: (name: String, data: Data)) throws -> JointSMC<LayeredToy>.Snapshot.Phase {
        let r = save.name == "joint-0" ? 0 : 1
        return try JointSMC<LayeredToy>.Snapshot(decoding: save.data, name: save.name, sampler: sampler(nil), replicate: r, stops: stops).phase
    }

    @Test func aStoppedRunContinuesToTheSameBytes() async throws {
        let reference = try await sampler(nil).run(stops: stops, threads: 1)
        let full = MemoryCheckpoints()
        same(try await sampler(full).run(stops: stops, threads: 1), reference, "saving every step")
        let phases = try full.log.map(phase)
        let forward = phases.firstIndex(of: .forward), reverse = phases.firstIndex { if case .reverse = $0 { true } else { false } }
        let done = phases.firstIndex(of: .done)
        let (f, r, d) = (try #require(forward), try #require(reverse), try #require(done))
        #expect(phases.filter { $0 == .done }.count == 2, "one final snapshot per sampler")
        #expect(full.log.count > 6, "steps enough to stop between")
        // Stopped at the first save, in the forward pass, at the reverse pass's first step and its last, just after
        // the first sampler finished, and just before the last save: continued at 2 threads.
        let n = full.log.count
        for kill in Set([f + 1, f + 3, r + 1, d, d + 1, d + 2, n - 1]).sorted() where kill < n {
            let store = MemoryCheckpoints()
            store.killAt = kill + 1
            await #expect(throws: MemoryCheckpoints.Killed.self) { _ = try await sampler(store).run(stops: stops, threads: 1) }
            #expect(store.log.count == kill)
            store.killAt = nil
            same(try await sampler(store).run(stops: stops, threads: 2), reference, "stopped after save \(kill) of \(n)")
            #expect(store.log.count == n, "the continued run saves only the steps after its snapshots, not the whole run again")
        }
    }

    @Test func anotherRunsSnapshotIsRefused() async throws {
        let store = MemoryCheckpoints()
        store.killAt = 4
        await #expect(throws: MemoryCheckpoints.Killed.self) { _ = try await sampler(store).run(stops: stops, threads: 1) }
        store.killAt = nil
        await #expect(throws: TwoScaleError.self) { _ = try await sampler(seed: 8, store).run(stops: stops, threads: 1) }
        var other = try sampler(store)
        other.particles = 16
        await #expect(throws: TwoScaleError.self) { _ = try await other.run(stops: stops, threads: 1) }
        await #expect(throws: TwoScaleError.self) { _ = try await sampler(store).run(stops: [2, 21], threads: 1) }
        // A damaged snapshot: cut short, or one word changed past the settings.
        let good = try #require(store.snapshots["joint-0"])
        for bad in [good.prefix(good.count - 8), good.prefix(good.count - 3), good + Data(count: 8)] {
            store.snapshots["joint-0"] = Data(bad)
            await #expect(throws: TwoScaleError.self) { _ = try await sampler(store).run(stops: stops, threads: 1) }
        }
        store.snapshots["joint-0"] = good
        _ = try await sampler(store).run(stops: stops, threads: 1)
    }

    /// The generator's saved state continues its sequence, a cached Box–Muller normal included; words that are
    /// no state are refused.
    @Test func generatorStateReadsBack() throws {
        var g = Xoshiro256(seed: 11, stream: [3])
        _ = g.normal()  // leaves the pair's second value cached
        var h = try #require(Xoshiro256(savedState: g.savedState))
        #expect(g.savedState[4] == 1)
        for _ in 0..<5 { #expect(g.normal() == h.normal() && g.next() == h.next()) }
        #expect(Xoshiro256(savedState: [0, 0, 0, 0, 0, 0]) == nil)
        #expect(Xoshiro256(savedState: [1, 2, 3, 4, 2, 0]) == nil)
        #expect(Xoshiro256(savedState: [1, 2, 3]) == nil)
    }
}
