import Foundation
import RandomStreams

extension Network {
    /// The teacher MLP of `seed`: Sampling's one teacher generator (`Teacher`) — every weight and bias
    /// U(−1, 1) from the stream `(seed, TEAW)`, in the parameter order of `parameters`. Used by both
    /// teacher paths, `DataSource.teacher` (`synthetic:teacher:ARCH`) and Training's
    /// `TeacherTask.random` (`gap`'s `Setting.teacher`), so one seed gives one teacher.
    public static func teacher(architecture: Architecture, activation: Activation, seed: UInt64) -> Network {
        var rng = Teacher.parameterGenerator(seed: seed)
        return Network.uniform(architecture: architecture, activation: activation, box: Teacher.box, rng: &rng)
    }
}
