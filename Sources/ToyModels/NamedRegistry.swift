import Foundation

/// Families found by name: the shipped ones, then those a program registers, behind one lock (the toys'
/// two registries, `AxisFamilies` and `StagedToyFamilies`).
final class NamedRegistry<Item: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private let shipped: [Item]
    private var added: [Item] = []
    private let name: @Sendable (Item) -> String

    init(shipped: [Item], name: @escaping @Sendable (Item) -> String) {
        self.shipped = shipped
        self.name = name
    }

    var all: [Item] {
        lock.lock()
        defer { lock.unlock() }
        return shipped + added
    }

    func named(_ n: String) -> Item? { all.first { name($0) == n } }

    /// Adds `item` unless its name is present or `taken` elsewhere (asked before this registry's lock is held,
    /// so two registries that ask each other never wait on each other).
    func add(_ item: Item, refusedIf taken: (String) -> Bool) -> Bool {
        let n = name(item)
        guard !taken(n) else { return false }
        lock.lock()
        defer { lock.unlock() }
        guard !(shipped + added).contains(where: { name($0) == n }) else { return false }
        added.append(item)
        return true
    }

    /// Removes an added item of that name (the shipped ones stay).
    func remove(named n: String) {
        lock.lock()
        defer { lock.unlock() }
        added.removeAll { name($0) == n }
    }
}
