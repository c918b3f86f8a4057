import Foundation
@testable import Samplers
import TestSupport
import Testing
import ToyModels
import TwoScaleCore

/// The tempered lower 2sED's checkpoints (`temperedLower(checkpoints:)`): a run stopped after any save (stage 1's
/// term, a prefix run's tempering step or settling sweeps, a stop's islands, a finished task) and continued from what
/// was saved ends with the same numbers, bit for bit, as a run never stopped, and saves only what was left; saving
/// changes nothing; a snapshot made with other settings, or a damaged one, is refused.
@Suite struct TemperedLowerCheckpointTests {
    let model: LayeredToy
    let stops: [Double] = [2, 20]

    init() throws {
        model = try LayeredToy(units: [2, 2, 2], unitSize: [3, 3, 3], coupling: 3)
    }

    func run(seed: UInt64 = 5, islands: Int = 2, _ store: MemoryCheckpoints?, threads: Int = 1) async throws -> TemperedLower {
        let smc = try StagedSMC(model: model, box: model.box, seed: seed, paths: 8, inner: 8, traceDraws: 100)
        return try await smc.temperedLower(stops: stops, particles: 12, replicates: 2, sweeps: 2, islands: islands, checkpoints: store,
                                           threads: threads)
    }

    @Test func aStoppedRunContinuesToTheSameBytes() async throws {
        let reference = try await run(nil)
        let full = MemoryCheckpoints()
        #expect(try await run(full) == reference, "saving every step")
        let names = full.log.map(\.name)
        #expect(Set(names) == ["lower-stage1", "lower-1-0", "lower-1-1", "lower-2-0", "lower-2-1"])
        #expect(names.filter { $0 == "lower-stage1" }.count == 1)
        let n = full.log.count
        #expect(n > 20, "steps enough to stop between")
        for kill in 1..<n {
            let store = MemoryCheckpoints()
            store.killAt = kill + 1
            await #expect(throws: MemoryCheckpoints.Killed.self) { _ = try await run(store) }
            #expect(store.log.count == kill)
            store.killAt = nil
            #expect(try await run(store, threads: 2) == reference, "stopped after save \(kill) of \(n)")
            #expect(store.log.count == n, "stopped after save \(kill): the continued run saves only what was left")
        }
        // A finished folder gives the result again without a save.
        #expect(try await run(full, threads: 2) == reference)
        #expect(full.log.count == n)
    }

    @Test func anotherRunsSnapshotIsRefused() async throws {
        let store = MemoryCheckpoints()
        store.killAt = 8
        await #expect(throws: MemoryCheckpoints.Killed.self) { _ = try await run(store) }
        store.killAt = nil
        await #expect(throws: TwoScaleError.self) { _ = try await run(seed: 6, store) }
        await #expect(throws: TwoScaleError.self) { _ = try await run(islands: 3, store) }
        let task = try #require(store.snapshots["lower-1-0"]), one = try #require(store.snapshots["lower-stage1"])
        for (name, good) in [("lower-1-0", task), ("lower-stage1", one)] {
            for bad in [good.prefix(good.count - 8), good.prefix(good.count - 3), good + Data(count: 8)] {
                store.snapshots[name] = Data(bad)
                await #expect(throws: TwoScaleError.self) { _ = try await run(store) }
            }
            store.snapshots[name] = good
        }
        #expect(try await run(store) == (try await run(nil)))
    }
}
