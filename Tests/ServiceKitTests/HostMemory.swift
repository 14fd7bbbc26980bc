import ServiceABI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// C memory a test hands to the SDK the way a host would, freed when the test ends.
final class HostMemory {
    private var frees: [() -> Void] = []

    deinit { for free in frees { free() } }

    /// A NUL-terminated copy of `text`.
    func string(_ text: String) -> UnsafePointer<CChar> {
        let copy = strdup(text)!
        frees.append { free(copy) }
        return UnsafePointer(copy)
    }

    /// A copy of `bytes` (not terminated).
    func bytes(_ bytes: [UInt8]) -> UnsafePointer<UInt8> {
        let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(bytes.count, 1))
        copy.initialize(from: bytes, count: bytes.count)
        frees.append { copy.deallocate() }
        return UnsafePointer(copy)
    }

    /// `value` in memory of its own, for as long as the test runs.
    func place<T>(_ value: T) -> UnsafeMutablePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: 1)
        pointer.initialize(to: value)
        frees.append {
            pointer.deinitialize(count: 1)
            pointer.deallocate()
        }
        return pointer
    }

    /// `values` as a C array.
    func array<T>(_ values: [T]) -> UnsafePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: max(values.count, 1))
        pointer.initialize(from: values, count: values.count)
        frees.append {
            pointer.deinitialize(count: values.count)
            pointer.deallocate()
        }
        return UnsafePointer(pointer)
    }

    /// A one-node-per-value `sh_json` tape for a flat object of numbers, in key order:
    /// what the host would send for `{"key": number, …}`.
    func tape(object members: [(String, Double)]) -> UnsafePointer<sh_json> {
        var nodes = [
            sh_json_node(
                type: SH_JSON_OBJECT.rawValue, count: UInt32(members.count),
                next: UInt32(1 + 2 * members.count), reserved: 0, string: nil, length: 0, number: 0)
        ]
        for (index, (key, number)) in members.enumerated() {
            let next = UInt32(2 + 2 * index)
            nodes.append(
                sh_json_node(
                    type: SH_JSON_STRING.rawValue, count: 0, next: next, reserved: 0,
                    string: string(key), length: key.utf8.count, number: 0))
            nodes.append(
                sh_json_node(
                    type: SH_JSON_NUMBER.rawValue, count: 0, next: next + 1, reserved: 0,
                    string: nil, length: 0, number: number))
        }
        return tape(nodes)
    }

    /// An `sh_json` document over `nodes`.
    func tape(_ nodes: [sh_json_node], size: UInt32 = UInt32(MemoryLayout<sh_json>.size)) -> UnsafePointer<sh_json> {
        UnsafePointer(place(sh_json(size: size, version: SH_JSON_VERSION, nodes: array(nodes), count: nodes.count)))
    }
}

/// The `size` of an older, shorter version of `S` that ends just before `member`.
func size<S, T>(endingBefore member: KeyPath<S, T>) -> UInt32 {
    UInt32(MemoryLayout<S>.offset(of: member)!)
}

/// The `size` of the current version of `S`.
func fullSize<S>(_ type: S.Type) -> UInt32 {
    UInt32(MemoryLayout<S>.size)
}
