import Foundation
import RandomStreams

extension Xoshiro256 {
    /// The Metropolis–Hastings test for a move whose log acceptance ratio is `logRatio`: accepted with probability
    /// min(1, e^{logRatio}), a uniform u drawn only where `logRatio < 0` (accepted where log u < `logRatio`),
    /// so a sure move leaves the stream where it was. A NaN ratio is refused.
    mutating func metropolisAccepts(logRatio: Double) -> Bool {
        logRatio >= 0 || Foundation.log(uniform()) < logRatio
    }
}
