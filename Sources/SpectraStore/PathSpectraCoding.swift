import TwoScaleCore
import TwoScaleFormats

/// One path's spectra as a flat list of float64 values, the layout of a partial path file
/// (`PartialFile`: `[B, J, then per block: w, w values, then per block m ≥ 1 and draw: w, w values]`) —
/// for sending a path between processes (MPI ranks) without touching a file.
extension PathSpectra {
    /// The flat encoding; `init(flattened:meta:source:)` reads it back exactly.
    public var flattened: [Double] { PartialFile.encode(self).data }

    /// Decodes `flattened` against the store's description (block sizes, J); `source` names the sender
    /// in errors.
    public init(flattened: [Double], meta: StoreMeta, source: String) throws {
        self = try PartialFile.decode(NPYArray(uncheckedShape: [flattened.count], data: flattened), meta: meta, source: source)
    }
}
