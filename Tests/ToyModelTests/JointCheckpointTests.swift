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

    /// Where each replicate stands is told (here after every step: `progressEvery` 0), in both passes, and telling
    /// it changes no number; at the default minute a run this short tells only that its samplers finished.
    @Test func progressIsToldAndChangesNothing() async throws {
        let reference = try await sampler(nil).run(stops: stops, threads: 1)
        final class Lines: @unchecked Sendable {
            let lock = NSLock()
            var all: [String] = []
            func add(_ s: String) { lock.lock(); all.append(s); lock.unlock() }
        }
        for every in [0.0, 60] {
            let lines = Lines()
            var j = try sampler(nil)
            (j.progress, j.progressEvery) = ({ lines.add($0) }, every)
            same(try await j.run(stops: stops, threads: 2), reference, "progress every \(every) s")
            let forward = lines.all.filter { $0.contains("forward pass at scale") }
            let reverse = lines.all.filter { $0.contains("reverse pass at scale") }
            #expect(lines.all.filter { $0.hasSuffix("tempering steps") && $0.contains(": done, ") }.count == 2, "\(lines.all)")
            if every == 0 {
                #expect(forward.count == reference.steps, "one line per forward step: \(forward.count) of \(reference.steps)")
                #expect(forward.contains { $0.hasPrefix("joint sampler 2: forward pass at scale ") && $0.hasSuffix(" of 20, 1 tempering steps") },
                        "\(forward)")
                #expect(reverse.contains { $0.hasPrefix("joint sampler 1: reverse pass at scale ") && $0.contains(" 1 of ") }, "\(reverse)")
                // The last rung above 0 of each reverse ladder: its count is the ladder's less the 0 it ends at.
                let ends = reverse.filter { line in
                    let parts = line.split(separator: " ")
                    guard let of = parts.firstIndex(of: "of"), of > 0 else { return false }
                    return Int(parts[of - 1]).map { $0 + 1 } == Int(parts[of + 1])
                }
                #expect(ends.count == 2, "\(reverse)")
            } else {
                #expect(forward.isEmpty && reverse.isEmpty, "\(lines.all)")
            }
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
