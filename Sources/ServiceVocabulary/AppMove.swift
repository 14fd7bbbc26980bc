/// A move of the app that a system source asks for (sources.h's `SH_APP_MOVE_*`), each carried
/// out in UIKit's order and only from the states it applies to: a move that does not apply does
/// nothing.
public enum AppMove: UInt32, CaseIterable, Sendable {
    /// Active → inactive: willResignActive (`SH_APP_MOVE_RESIGN_ACTIVE`).
    case resignActive = 1
    /// Active or inactive → background: willResignActive (when active), didEnterBackground
    /// (`SH_APP_MOVE_ENTER_BACKGROUND`).
    case enterBackground = 2
    /// Background → inactive: willEnterForeground (`SH_APP_MOVE_ENTER_FOREGROUND`).
    case enterForeground = 3
    /// Background or inactive → active: willEnterForeground (from the background),
    /// didBecomeActive (`SH_APP_MOVE_BECOME_ACTIVE`).
    case becomeActive = 4
}
