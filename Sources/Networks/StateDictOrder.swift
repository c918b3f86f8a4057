import TwoScaleCore
import TwoScaleFormats

/// The layers of a named (state-dict) weights file, in network order: the rule stated in
/// TensorWeights.swift. A module path's components are read as `STEM<N>` (`N` the final run of digits,
/// `STEM` possibly empty: `0`, `conv1`, `layer_12`) or a plain `STEM` (`features`, `encoder`).
extension WeightsFile {
    /// One component of a module path: `conv12` is ("conv", 12), `0` is ("", 0), `head` is ("head", nil).
    struct PathComponent: Hashable, Comparable {
        let stem: String
        let index: Int?

        init(_ text: Substring) {
            let digits = text.reversed().prefix { $0.isASCII && $0.isNumber }.count
            if digits > 0, let k = Int(text.suffix(digits)) {
                (stem, index) = (String(text.dropLast(digits)), k)
            } else {
                (stem, index) = (String(text), nil)
            }
        }

        /// For messages and deterministic listings only: by stem, then index (none first).
        static func < (x: Self, y: Self) -> Bool {
            x.stem != y.stem ? x.stem < y.stem : (x.index ?? -1) < (y.index ?? -1)
        }
    }

    /// The tensors `PATH.weight` and `PATH.bias` of one module (`PATH` empty: bare `weight`, `bias`).
    struct StateDictModule {
        let key: [PathComponent]
        let path: String
        var weight: NamedTensor?
        var bias: NamedTensor?
        var label: String { path.isEmpty ? "(root)" : path }
    }

    /// The module tree: a node per path prefix, children keyed by component.
    private struct ModuleNode {
        var children: [PathComponent: Int] = [:]
        var module: Int?
        var size = 0
    }

    /// At most this many ordering states per module (the product over a module's groups of children of
    /// (group size + 1)); past it the names are too unordered to resolve by shapes.
    static let maxOrderingStates = 1 << 16
    /// The deepest module path read (dot-separated parts of a tensor name before `weight`/`bias`).
    static let maxModuleDepth = 64

    static func namedLayers(_ tensors: [NamedTensor], architecture a: Architecture,
                            fail: (String) -> TwoScaleError) throws -> [(weight: NamedTensor, bias: NamedTensor?)] {
        // Group the tensors by module path.
        var modules: [StateDictModule] = []
        var byKey: [[PathComponent]: Int] = [:]
        for t in tensors {
            let isWeight = t.name == "weight" || t.name.hasSuffix(".weight")
            let isBias = t.name == "bias" || t.name.hasSuffix(".bias")
            let path = isWeight ? t.name.dropLast(min(t.name.count, 7)) : isBias ? t.name.dropLast(min(t.name.count, 5)) : ""
            let parts = path.split(separator: ".", omittingEmptySubsequences: false)
            guard isWeight || isBias, path.isEmpty ? !t.name.hasPrefix(".") : !parts.contains(where: \.isEmpty) else {
                throw fail("tensor '\(t.name)' is not a layer's weight or bias: expected PyTorch state-dict names ending in "
                           + "'.weight' or '.bias' ('0.weight', 'fc1.bias', 'features.0.weight', …) "
                           + "or NumPy's positional arr_0, arr_1, …")
            }
            let key = path.isEmpty ? [] : parts.map(PathComponent.init)
            let i = byKey[key] ?? {
                modules.append(StateDictModule(key: key, path: String(path)))
                byKey[key] = modules.count - 1
                return modules.count - 1
            }()
            let label = modules[i].label
            if isWeight {
                if let other = modules[i].weight {
                    throw fail("tensors '\(other.name)' and '\(t.name)' are both the weight of module \(label)")
                }
                modules[i].weight = t
            } else {
                if let other = modules[i].bias {
                    throw fail("tensors '\(other.name)' and '\(t.name)' are both the bias of module \(label)")
                }
                modules[i].bias = t
            }
        }
        let L = a.parametricLayers.count
        guard modules.count == L else {
            let names = modules.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.label)
            let shown = names.prefix(8).joined(separator: ", ") + (names.count > 8 ? ", …" : "")
            throw fail("has \(modules.count) layer\(modules.count == 1 ? "" : "s") (modules \(shown)), the architecture \(a) needs \(L)")
        }
        for m in modules where m.weight == nil {
            throw fail("has '\(m.bias?.name ?? "")' but no '\(m.path.isEmpty ? "" : m.path + ".")weight'")
        }
        if let any = modules.compactMap(\.bias).min(by: { $0.name < $1.name }) {
            guard a.bias else { throw fail("has bias tensors ('\(any.name)', …) but the network has none (pass \(Setting.bias))") }
            if let m = modules.first(where: { $0.bias == nil }), let w = m.weight {
                throw fail("has '\(any.name)' but no bias for '\(w.name)'; give every layer a bias, or none (zero biases)")
            }
        }

        let order = try moduleOrder(modules, architecture: a, fail: fail)
        return order.compactMap { i in modules[i].weight.map { ($0, modules[i].bias) } }
    }

    /// The modules in network order: the one order their names allow, else the one order of those that
    /// fits the architecture's shapes; none or several is an error naming the tensors.
    static func moduleOrder(_ modules: [StateDictModule], architecture a: Architecture,
                            fail: (String) -> TwoScaleError) throws -> [Int] {
        // The tree of module paths; a module's subtree is contiguous in the order (PyTorch's state_dict
        // lists a module's own tensors, then each child's, depth first). It is walked recursively, so its
        // depth is bounded.
        for m in modules where m.key.count > maxModuleDepth {
            throw fail("names a module \(m.key.count) levels deep ('\(m.label.prefix(60))…'); at most \(maxModuleDepth) are read")
        }
        var nodes = [ModuleNode()]
        for (i, m) in modules.enumerated() {
            var n = 0
            for c in m.key {
                if let next = nodes[n].children[c] {
                    n = next
                } else {
                    nodes.append(ModuleNode())
                    nodes[n].children[c] = nodes.count - 1
                    n = nodes.count - 1
                }
            }
            nodes[n].module = i
        }
        func size(_ n: Int) -> Int {
            let s = (nodes[n].module == nil ? 0 : 1) + nodes[n].children.values.reduce(0) { $0 + size($1) }
            nodes[n].size = s
            return s
        }
        _ = size(0)
        // A node's children in groups: the indexed ones of one stem (`0`, `2`, `10`; `fc1`, `fc2`) in
        // increasing index, each unindexed one alone. Groups keep their inner order; the order between
        // groups is unknown.
        let groups: [[[Int]]] = nodes.map { node in
            var indexed: [String: [(Int, Int)]] = [:]
            var alone: [(String, Int)] = []
            for (c, child) in node.children {
                if let k = c.index { indexed[c.stem, default: []].append((k, child)) } else { alone.append((c.stem, child)) }
            }
            let chains = indexed.map { ($0.key, 0, $0.value.sorted { $0.0 < $1.0 }.map(\.1)) } + alone.map { ($0.0, 1, [$0.1]) }
            return chains.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
        }
        for (n, g) in groups.enumerated() {
            let states = g.reduce(1) { Swift.min($0 * ($1.count + 1), maxOrderingStates + 1) }
            guard states <= maxOrderingStates else {
                let names = nodes[n].children.keys.sorted().prefix(6).map { "\($0.stem)\($0.index.map(String.init) ?? "")" }
                throw fail("cannot tell the order of its layers: too many modules without an index side by side ("
                           + names.joined(separator: ", ") + ", …); " + orderAdvice)
            }
        }

        /// Up to two orders of the whole tree in which `fits(module, parametric layer)` holds throughout.
        func orders(fits: (Int, Int) -> Bool) -> [[Int]] {
            var memo: [[Int]: [[Int]]] = [:]
            func solve(_ n: Int, at start: Int) -> [[Int]] {
                if let r = memo[[n, start]] { return r }
                var head: [Int] = []
                var p = start
                if let i = nodes[n].module {
                    guard fits(i, p) else { memo[[n, start]] = []; return [] }
                    head = [i]
                    p += 1
                }
                let chains = groups[n]
                var restMemo: [[Int]: [[Int]]] = [:]
                func rest(_ progress: [Int], at p: Int) -> [[Int]] {
                    if let r = restMemo[progress] { return r }
                    var out: [[Int]] = zip(progress, chains).allSatisfy({ $0 == $1.count }) ? [[]] : []
                    for (g, chain) in chains.enumerated() where progress[g] < chain.count && out.count < 2 {
                        let child = chain[progress[g]]
                        let subs = solve(child, at: p)
                        guard !subs.isEmpty else { continue }
                        var next = progress
                        next[g] += 1
                        let tails = rest(next, at: p + nodes[child].size)
                        for s in subs { for t in tails where out.count < 2 { out.append(s + t) } }
                    }
                    restMemo[progress] = out
                    return out
                }
                let r = rest([Int](repeating: 0, count: chains.count), at: p).map { head + $0 }
                memo[[n, start]] = r
                return r
            }
            return solve(0, at: 0)
        }

        let byNames = orders { _, _ in true }
        if byNames.count == 1 { return byNames[0] }
        func fits(_ i: Int, _ b: Int) -> Bool {
            guard b < a.parametricLayers.count, let w = modules[i].weight else { return false }
            let m = a.parametricLayers[b]
            let s = a.structure(layer: m)
            let pytorch = a.parametric(layer: m).pytorchWeight.map { w.shape == $0.shape } ?? false
            return (w.shape == [s.units, s.patchSize] || pytorch) && (modules[i].bias.map { $0.shape == [s.units] } ?? true)
        }
        let byShapes = orders(fits: fits)
        if byShapes.count == 1 { return byShapes[0] }
        func list(_ ids: [Int]) -> String {
            ids.prefix(8).compactMap { modules[$0].weight.map { "'\($0.name)'" } }.joined(separator: ", ") + (ids.count > 8 ? ", …" : "")
        }
        if byShapes.isEmpty {
            let needs = a.parametricLayers.map { m -> String in
                let s = a.structure(layer: m)
                let pytorch = a.parametric(layer: m).pytorchWeight.map { " or \($0.shapeText)" }
                return "\(s.units)×\(s.patchSize)" + (pytorch ?? "")
            }
            let has = modules.indices.sorted { modules[$0].key.lexicographicallyPrecedes(modules[$1].key) }.compactMap { i in
                modules[i].weight.map { "'\($0.name)' \($0.shapeText)" }
            }
            throw fail("cannot tell the order of its layers from their names, and no order fits the architecture \(a), whose "
                       + "weights are \(needs.prefix(8).joined(separator: ", "))\(needs.count > 8 ? ", …" : ""); "
                       + "the file has \(has.prefix(8).joined(separator: ", "))\(has.count > 8 ? ", …" : "")")
        }
        let differ = (0..<modules.count).filter { byShapes[0][$0] != byShapes[1][$0] }
        let layers = differ.prefix(8).map { "W_\($0 + 1)" }.joined(separator: ", ") + (differ.count > 8 ? ", …" : "")
        throw fail("cannot tell the order of its layers from their names, and more than one order fits the architecture \(a) "
                   + "(\(layers) = \(list(differ.map { byShapes[0][$0] })) or \(list(differ.map { byShapes[1][$0] }))); " + orderAdvice)
    }

    static let orderAdvice = "save the tensors in the network's order, np.savez(f, *[t.numpy() for t in model.state_dict().values()]), "
        + "or name them 0.weight, 0.bias, 1.weight, … in layer order"
}
