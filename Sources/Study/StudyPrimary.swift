import Foundation
import Statistics
import RandomStreams
import Training
import TwoScaleCore

/// The study's primary test of the paper's claim, pre-registered (docs/STUDY.md, "The primary test"):
/// among models of equal size, a larger 2sED goes with a lower training loss.
///
/// Statistic: per data set, the mean over the size groups g and the training templates t (learning rate ×
/// batch) of the oriented τ_b between the architectures' 2sEDs and their models' seed-mean training losses
/// within (g, t). Interval: a bootstrap that, per replicate, redraws every architecture's 2sED once from its
/// own uncertainty (`FisherCell.redraw`), then per group resamples its architectures with replacement and
/// per drawn model its seeds with replacement; the 95% percentile interval of the replicates. Decision:
/// `supported` where the interval's lower end is above 0, `refuted` where its upper end is below 0,
/// `inconclusive` otherwise; the claim is supported by the study where it is supported on every data set.
public struct StudyPrimary: Sendable, Encodable {
    public enum Decision: String, Sendable, Encodable { case supported, refuted, inconclusive }

    public struct Row: Sendable, Encodable {
        public var dataset: String
        public var tau: Double
        public var tauLow: Double
        public var tauHigh: Double
        public var decision: Decision
        /// (group, template) cells whose τ_b is defined (a constant 2sED or loss within one leaves it out).
        public var cells: Int

        enum CodingKeys: String, CodingKey { case dataset, tau, tauLow = "tau_low", tauHigh = "tau_high", decision, cells }
    }

    public var rows: [Row]
    /// `supported` where every data set's row is, `refuted` where every one is, else `inconclusive`.
    public var decision: Decision

    static let stream: UInt64 = 0x5052_494D  // "PRIM"

    /// The mean oriented τ_b over (group, template) cells of per-architecture 2sEDs `x[a]` against
    /// per-model losses `loss[a][t]`, for the architectures `members[g]` of each group; nil where no cell is
    /// defined. Oriented: a larger 2sED with a lower loss counts as concordant.
    static func meanTau(x: [Double], loss: [[Double]], members: [[Int]]) -> (tau: Double, cells: Int)? {
        var sum = 0.0, count = 0
        for m in members {
            for t in loss[m[0]].indices {
                if let tau = KendallTau.tauB(m.map { x[$0] }, m.map { -loss[$0][t] }) { sum += tau; count += 1 }
            }
        }
        return count > 0 ? (sum / Double(count), count) : nil
    }

    public static func run(grid: StudyGrid, cells: StudyCells, replicates: Int) throws -> StudyPrimary {
        guard replicates >= 20 else { throw TwoScaleError.invalid("replicates", "\(replicates)", allowed: "at least 20 bootstrap replicates") }
        let groupOf = try grid.architectures.map(\.group)
        let names = grid.groups.map(\.name)
        let members = names.map { n in groupOf.indices.filter { groupOf[$0] == n } }
        var rows: [Row] = []
        for (di, d) in grid.datasets.enumerated() {
            let fisher = cells.fisher[di]
            // seeds[a][t]: the per-seed training losses of architecture a at template t.
            let seeds = cells.training[di].map { perTemplate in perTemplate.map { $0.map(\.trainLoss) } }
            let means = seeds.map { $0.map { $0.reduce(0, +) / Double($0.count) } }
            guard let point = meanTau(x: fisher.map(\.dZeta), loss: means, members: members) else {
                throw TwoScaleError.failure("study: the primary τ is undefined on \(d.name): every (group, template) has a constant 2sED or loss")
            }
            let laws = fisher.map { $0.redraw(lower: false) }
            var draws: [Double] = []
            for r in 0..<replicates {
                var rng = Xoshiro256(seed: grid.seed, stream: [Self.stream, UInt64(di), UInt64(r)])
                let x = laws.map { $0.draw(&rng) }
                var drawnMembers: [[Int]] = [], drawnX: [Double] = [], drawnLoss: [[Double]] = []
                for m in members {
                    var slots: [Int] = []
                    for _ in m.indices {
                        let a = m[rng.index(m.count)]
                        slots.append(drawnX.count)
                        drawnX.append(x[a])
                        drawnLoss.append(seeds[a].map { s in (0..<s.count).reduce(0) { acc, _ in acc + s[rng.index(s.count)] } / Double(s.count) })
                    }
                    drawnMembers.append(slots)
                }
                if let t = meanTau(x: drawnX, loss: drawnLoss, members: drawnMembers) { draws.append(t.tau) }
            }
            guard draws.count >= replicates / 2 else {
                throw TwoScaleError.failure("study: the primary τ is undefined in \(replicates - draws.count) of \(replicates) replicates on \(d.name)")
            }
            let sorted = draws.sorted()
            let lo = Quantiles.quantile(sorted, 0.025), hi = Quantiles.quantile(sorted, 0.975)
            let decision: Decision = lo > 0 ? .supported : (hi < 0 ? .refuted : .inconclusive)
            rows.append(Row(dataset: d.name, tau: point.tau, tauLow: lo, tauHigh: hi, decision: decision, cells: point.cells))
        }
        let all = Set(rows.map(\.decision))
        return StudyPrimary(rows: rows, decision: all == [.supported] ? .supported : (all == [.refuted] ? .refuted : .inconclusive))
    }
}
