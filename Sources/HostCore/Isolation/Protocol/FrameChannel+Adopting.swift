#if canImport(CSystem)
    import CSystem
#endif

extension FrameChannel {
    /// A channel over a socket that is already open (the corpus tests and the frame fuzz target
    /// make one from a socketpair). Where FrameChannel owns a FileDescriptor, it closes the
    /// socket with the channel; otherwise the socket stays open for the process.
    // Rationale: one spelling for both FrameChannel initialisers while the branches that
    // change it merge; once they have, this is `FrameChannel(socket: FileDescriptor(taking:))`.
    static func adopting(_ descriptor: Int32) -> FrameChannel {
        #if canImport(CSystem)
            FrameChannel(socket: FileDescriptor(taking: descriptor))
        #else
            FrameChannel(descriptor: descriptor)
        #endif
    }
}
