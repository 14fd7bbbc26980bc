import ServiceKit

/// Correct, but no dynamic library product holds its target: no .so to load.
final class NotDynamicService: ApplicationService {}
