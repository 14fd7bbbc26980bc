// swift-format-ignore-file
// Row 1 (a)'s receivers: 100 distinct service classes, one per service at the largest count, as an
// app with 100 services has 100 classes (each call goes to a witness of its own, as the host's
// calls go to 100 plugins). One line each, so the file is ignored by swift-format; written by
// `for i in $(seq -w 0 99)` (the classes differ only in name).
final class DirectService00: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService01: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService02: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService03: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService04: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService05: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService06: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService07: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService08: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService09: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService10: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService11: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService12: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService13: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService14: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService15: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService16: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService17: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService18: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService19: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService20: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService21: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService22: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService23: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService24: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService25: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService26: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService27: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService28: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService29: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService30: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService31: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService32: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService33: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService34: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService35: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService36: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService37: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService38: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService39: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService40: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService41: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService42: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService43: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService44: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService45: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService46: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService47: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService48: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService49: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService50: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService51: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService52: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService53: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService54: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService55: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService56: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService57: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService58: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService59: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService60: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService61: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService62: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService63: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService64: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService65: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService66: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService67: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService68: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService69: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService70: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService71: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService72: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService73: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService74: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService75: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService76: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService77: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService78: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService79: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService80: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService81: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService82: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService83: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService84: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService85: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService86: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService87: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService88: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService89: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService90: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService91: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService92: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService93: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService94: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService95: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService96: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService97: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService98: DirectService { func didBecomeActive() {}; func willResignActive() {} }
final class DirectService99: DirectService { func didBecomeActive() {}; func willResignActive() {} }

/// The 100 classes in order: `DirectServices.make(count:)` takes the first `count`.
let directServiceTypes: [any DirectService.Type] = [
    DirectService00.self, DirectService01.self, DirectService02.self, DirectService03.self, DirectService04.self,
    DirectService05.self, DirectService06.self, DirectService07.self, DirectService08.self, DirectService09.self,
    DirectService10.self, DirectService11.self, DirectService12.self, DirectService13.self, DirectService14.self,
    DirectService15.self, DirectService16.self, DirectService17.self, DirectService18.self, DirectService19.self,
    DirectService20.self, DirectService21.self, DirectService22.self, DirectService23.self, DirectService24.self,
    DirectService25.self, DirectService26.self, DirectService27.self, DirectService28.self, DirectService29.self,
    DirectService30.self, DirectService31.self, DirectService32.self, DirectService33.self, DirectService34.self,
    DirectService35.self, DirectService36.self, DirectService37.self, DirectService38.self, DirectService39.self,
    DirectService40.self, DirectService41.self, DirectService42.self, DirectService43.self, DirectService44.self,
    DirectService45.self, DirectService46.self, DirectService47.self, DirectService48.self, DirectService49.self,
    DirectService50.self, DirectService51.self, DirectService52.self, DirectService53.self, DirectService54.self,
    DirectService55.self, DirectService56.self, DirectService57.self, DirectService58.self, DirectService59.self,
    DirectService60.self, DirectService61.self, DirectService62.self, DirectService63.self, DirectService64.self,
    DirectService65.self, DirectService66.self, DirectService67.self, DirectService68.self, DirectService69.self,
    DirectService70.self, DirectService71.self, DirectService72.self, DirectService73.self, DirectService74.self,
    DirectService75.self, DirectService76.self, DirectService77.self, DirectService78.self, DirectService79.self,
    DirectService80.self, DirectService81.self, DirectService82.self, DirectService83.self, DirectService84.self,
    DirectService85.self, DirectService86.self, DirectService87.self, DirectService88.self, DirectService89.self,
    DirectService90.self, DirectService91.self, DirectService92.self, DirectService93.self, DirectService94.self,
    DirectService95.self, DirectService96.self, DirectService97.self, DirectService98.self, DirectService99.self,
]
