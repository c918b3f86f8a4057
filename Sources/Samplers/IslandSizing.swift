import Foundation
import TwoScaleCore

/// Islands sized from their own noise (docs/ESTIMATORS.md §3, "Islands sized from their noise").
///
/// With two or more later stages the 2sED's stage term is a log-mean of the islands' pooled estimates raised
/// to the n-th power, and `powerBias` corrects its excess only under a lognormal model of their noise; where
/// the islands' mean noise variance σ̄² (nats², `n² var_r(l_r)/R` averaged over the islands) is several nats²,
/// the heavier right tail leaves each stage high by about σ̄² more. So where the sampled interval can stand at
/// all (stage 1 decorrelated, no outer moves, every earlier later stage passing the rule: `sizesStage`), each later
/// stage's J is doubled until σ̄² is at most
/// `ReportedInterval.maximumIslandNoiseVariance`, judged on `pilotIslands` islands, up to
/// `maximumInnerFactor` times the starting J. The pilot runs on streams of its own, at the first outer
/// particles, and is not kept: an island's log estimate and its noise come from the same replicates and rise
/// together, so islands kept because their own noise was small sit low. All K islands then run at the chosen J;
/// where the whole stage's σ̄² still exceeds the target, it is run once more at twice the J (a 16-island pilot's
/// noise is itself uncertain by about a third, which is also why no doubling is judged by its gain on the pilot
/// alone).
extension StagedSMC {
    /// Islands of the pilot that chooses J (the first of the K outer particles).
    public static var pilotIslands: Int { 16 }
    /// The largest J the sizing reaches, as a multiple of the starting J (`inner`).
    public static var maximumInnerFactor: Int { 8 }

    /// Whether this run sizes its islands: two or more later stages, no outer moves, and stage 1's moves
    /// decorrelated (`ReportedInterval.minimumDecorrelation`; nil: no move measured), the cases where the
    /// sampled interval can be reported and the islands' noise decides whether it holds.
    func sizesIslands(stageOneDecorrelation d: Double?) -> Bool {
        model.stageUnits.count > 2 && moveProposals == 0 && (d ?? 1) >= ReportedInterval.minimumDecorrelation
    }

    /// Whether, in a run that sizes its islands, the next later stage is sized: only while every later stage
    /// before it passed the rule's checks of it alone (`ReportedInterval.laterStagePasses`; ESS as counted of K =
    /// `paths`, s², σ̄²). After one that failed, the reported interval is the bracket whatever the islands do,
    /// and sizing would change only the point estimate, by less than its own noise (lab log, 2 Dec 2026). Nor
    /// after a stage the majorant tilted (`afterTilt`) unless the lower 2sED is reported (`lower`): the 2sED then
    /// reports its bracket (`EpsilonEstimate.reportedIntervals`), and only the lower 2sED's interval can still be
    /// sampled (lab log, 5 Dec 2026).
    static func sizesStage(afterESS ess: [Double], logWeightVariance s2: [Double], islandNoiseVariance noise: [Double], paths: Int,
                           afterTilt: Bool = false, lower: Bool = true) -> Bool {
        (lower || !afterTilt)
            && ReportedInterval.firstFailingLaterStage(essFraction: ess.map { $0 / Double(paths) }, logWeightVariance: s2,
                                                       islandNoiseVariance: noise) == nil
    }

    /// The islands of stage m for the outer particles `from..<start.count`, on the run's streams; a `pilot`'s on
    /// streams of its own, without the draws and the bound that only kept islands use.
    func islandBatch(_ m: Int, start: [Model.State], at: Stop, settings: SMCSettings, from: Int, upTo end: Int? = nil,
                     pilot: Bool = false, threads: Int) async throws -> [Island] {
        let me = self
        let (t, s) = (at.index, at.scale)
        let end = end ?? start.count
        return try await sharing.map(end - from, threads: threads) { i in
            let k = from + i
            let stream: [UInt64] = [Self.stream, 5, UInt64(t), UInt64(m), UInt64(k)] + (pilot ? [Self.pilotStream] : [])
            return try me.island(start[k], stage: m, scale: s, settings: settings, stream: stream,
                                 drawStream: [Self.stream, 6, UInt64(t), UInt64(m), UInt64(k)], bound: !pilot, draws: !pilot)
        }
    }

    /// The pilot islands' stream suffix.
    static var pilotStream: UInt64 { 0x5049_4C54 }  // "PILT"

    /// The islands' mean noise variance σ̄² (nats²).
    static func meanNoise(_ islands: [Island]) -> Double {
        islands.isEmpty ? 0 : islands.reduce(0) { $0 + $1.noise } / Double(islands.count)
    }

    /// Stage m's islands at a J chosen from their noise (see the extension's comment): the settings used and
    /// all K islands.
    func sizedIslands(_ m: Int, start: [Model.State], at: Stop, settings base: SMCSettings, threads: Int,
                      progress: @escaping @Sendable (String) -> Void) async throws -> (SMCSettings, [Island]) {
        let target = ReportedInterval.maximumIslandNoiseVariance
        let cap = base.particles * Self.maximumInnerFactor
        let pilotCount = Swift.min(Self.pilotIslands, start.count)
        var settings = base
        var pilot = try await islandBatch(m, start: start, at: at, settings: settings, from: 0, upTo: pilotCount, pilot: true,
                                          threads: threads)
        while Self.meanNoise(pilot) > target, settings.particles * 2 <= cap {
            settings.particles *= 2
            pilot = try await islandBatch(m, start: start, at: at, settings: settings, from: 0, upTo: pilotCount, pilot: true,
                                          threads: threads)
            progress("islands of J = \(settings.particles * settings.replicates): noise \(String(format: "%.3g", Self.meanNoise(pilot))) nats² over \(pilotCount) pilot islands")
        }
        var islands = try await islandBatch(m, start: start, at: at, settings: settings, from: 0, threads: threads)
        // The pilot's 16 islands misjudged the whole stage: once more at twice the J. A pilot of all K islands
        // judged as many islands as the stage has.
        if pilotCount < start.count, Self.meanNoise(islands) > target, settings.particles * 2 <= cap {
            settings.particles *= 2
            progress("islands of J = \(settings.particles * settings.replicates): the stage's noise over all islands was above \(String(format: "%.3g", target)) nats²")
            islands = try await islandBatch(m, start: start, at: at, settings: settings, from: 0, threads: threads)
        }
        return (settings, islands)
    }
}
