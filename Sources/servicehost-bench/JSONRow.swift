import Foundation
import ServiceJSON

/// Rows 8 and 9 (issue 13): the JSON parsers alone, per document.
///
/// Row 8: a push payload (1 KiB, 4 KiB, as row 2 sends) parsed the way the host does, once,
/// straight into the `sh_json` tape (`JSONTape(parsing:)`, the text kept), against a strict
/// validating scan in C that builds nothing (bench-floor jsonscan, Sources/bench-c/jsonscan.c)
/// and against Foundation's `JSONSerialization`. Row 9: `JSONValue(parsing:)` (settings, the
/// SDK, control requests) on the payloads, a twitter.json-like document and a 1 MiB mixed
/// document, against `JSONSerialization`.
@MainActor
struct JSONRow {
    let floor: String
    let directory: String
    let reps: Int
    let quick: Bool

    private(set) var raw: [(String, Double)] = []

    mutating func run(tape wantsTape: Bool, value wantsValue: Bool) throws(BenchError) -> [Row] {
        var rows: [Row] = []
        let payloads = [1024, 4096].map { ("push payload \($0 / 1024) KiB", PayloadRow.payload(bytes: $0)) }
        if wantsTape {
            for (label, bytes) in payloads {
                let units = quick ? 500 : 20_000
                let data = Data(bytes)
                let path = try write(bytes)
                let samples = try interleavedSamples(
                    reps: reps,
                    [
                        { timed(units: units) { Self.tape(bytes, units) } },
                        { timed(units: units) { Self.foundation(data, units) } },
                        { [self] in try self.floorNanoseconds(path, rounds: units) },
                    ])
                let (tape, foundation, floorFigure) = (median(samples[0]), median(samples[1]), median(samples[2]))
                let rate = { (ns: Double) in Self.rate(bytes.count, ns) }
                rows += [
                    .paired(
                        row: "9",
                        measured:
                            "\(label) → sh_json tape (the host's one parse, \(rate(tape))), vs a C validating scan "
                            + "(\(rate(floorFigure)))", unit: .nanoseconds, ours: samples[0], baseline: samples[2],
                        target: "≥ 25% of the floor: ≤ 4×", maxRatio: 4),
                    .paired(
                        row: "9",
                        measured: "\(label) → sh_json tape, vs Foundation JSONSerialization (\(rate(foundation)))",
                        unit: .nanoseconds, ours: samples[0], baseline: samples[1], target: "≥ 3× faster: ≤ 0.33×",
                        maxRatio: 1 / 3.0),
                ]
                let key = "json.push_\(bytes.count)"
                raw += [
                    ("\(key).tape_ns", tape), ("\(key).floor_ns", floorFigure), ("\(key).foundation_ns", foundation),
                    ("\(key).tape_mb_per_s", Double(bytes.count) * 1e3 / tape),
                    ("\(key).floor_mb_per_s", Double(bytes.count) * 1e3 / floorFigure),
                ]
            }
        }
        if wantsValue {
            let documents =
                payloads + [
                    ("twitter.json-like document (\(Self.twitterLike().count / 1024) KiB)", Self.twitterLike()),
                    ("mixed document (1 MiB)", Self.mixed(bytes: 1 << 20)),
                ]
            for (label, bytes) in documents {
                let units = max(2, (quick ? 500_000 : 20_000_000) / bytes.count)
                let data = Data(bytes)
                let samples = try interleavedSamples(
                    reps: reps,
                    [
                        { timed(units: units) { Self.value(bytes, units) } },
                        { timed(units: units) { Self.foundation(data, units) } },
                    ])
                let (value, foundation) = (median(samples[0]), median(samples[1]))
                rows.append(
                    .paired(
                        row: "10",
                        measured:
                            "JSONValue parse, \(label) (\(Self.rate(bytes.count, value))), vs Foundation JSONSerialization "
                            + "(\(Self.rate(bytes.count, foundation)))", unit: .nanoseconds, ours: samples[0],
                        baseline: samples[1],
                        target: "≥ 2.5× faster: ≤ 0.4×", maxRatio: 0.4))
                raw += [
                    ("json.value_\(bytes.count).ns", value), ("json.value_\(bytes.count).foundation_ns", foundation),
                ]
            }
        }
        return rows
    }

    static func rate(_ bytes: Int, _ nanoseconds: Double) -> String {
        "\(Int((Double(bytes) * 1e3 / nanoseconds).rounded())) MB/s"
    }

    /// `bytes` in a file for bench-floor; its path.
    private func write(_ bytes: [UInt8]) throws(BenchError) -> String {
        let path = directory + "/payload-\(bytes.count).json"
        guard let file = fopen(path, "wb") else { throw BenchError("cannot write \(path)") }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
        guard written == bytes.count else { throw BenchError("cannot write \(path)") }
        return path
    }

    /// bench-floor's ns per scan of the file at `path`, in its own process: one measured
    /// repetition after its own warm-up.
    private func floorNanoseconds(_ path: String, rounds: Int) throws(BenchError) -> Double {
        var child = try Child(floor, ["jsonscan", path, String(rounds), "1"], capture: 1)
        let status = child.finish(signal: nil)
        let text = child.text.split(separator: "\n").first.map(String.init) ?? ""
        guard status == 0, let figure = Double(text) else {
            throw BenchError("bench-floor jsonscan failed (\(status)): \(child.text)")
        }
        return figure
    }

    @inline(never)
    static func tape(_ bytes: [UInt8], _ units: Int) {
        for _ in 0..<units {
            guard let tape = try? JSONTape(parsing: bytes), tape.document.count > 1 else { fatalError("bad payload") }
        }
    }

    @inline(never)
    static func value(_ bytes: [UInt8], _ units: Int) {
        for _ in 0..<units {
            guard let value = try? JSONValue(parsing: bytes), value != .null else { fatalError("bad document") }
        }
    }

    @inline(never)
    static func foundation(_ data: Data, _ units: Int) {
        for _ in 0..<units {
            guard (try? JSONSerialization.jsonObject(with: data)) != nil else { fatalError("bad document") }
        }
    }

    /// Shaped like twitter.json (the common parser benchmark): statuses with a user object
    /// each, entities, ids as numbers, many short strings, non-ASCII text and \u escapes.
    static func twitterLike() -> [UInt8] {
        var statuses: [String] = []
        for index in 0..<300 {
            let text =
                index % 3 == 0
                ? #"@aym0566x \n\n名前:前田あゆみ\n第一印象:なんか怖っ！\n今の印象:とりあえずキモい。噛み合わない\n好きなところ:ぶすでキモいとこ😋✨✨"#
                : #"RT @KATANA77: \u3048\u3063\u3000\u305d\u308c\u306f\u2026 http://t.co/PkCJAcSuYK #\u3064\u304f\u308a\u305f\u3044"#
            statuses.append(
                #"{"metadata":{"result_type":"recent","iso_language_code":"ja"},"created_at":"Sun Aug 31 00:29:15 +0000 2014","#
                    + #""id":\#(505_874_924_095_815_681 + index),"id_str":"\#(505_874_924_095_815_681 + index)","text":"\#(text)","#
                    + #""source":"<a href=\"http://twitter.com/download/iphone\" rel=\"nofollow\">Twitter for iPhone</a>","#
                    + #""truncated":false,"in_reply_to_status_id":null,"in_reply_to_user_id":\#(1_186_275_104 + index),"#
                    + #""user":{"id":\#(1_186_275_104 + index),"name":"AYUMI","screen_name":"ayuu0123","location":"","#
                    + #""description":"元野球部マネージャー❤︎…最高の夏をありがとう…❤︎","url":null,"protected":false,"#
                    + #""followers_count":\#(262 + index),"friends_count":252,"listed_count":0,"favourites_count":235,"#
                    + #""utc_offset":null,"geo_enabled":false,"verified":false,"statuses_count":\#(1769 + index),"lang":"en","#
                    + #""profile_background_color":"C0DEED","profile_use_background_image":true,"default_profile":true},"#
                    + #""geo":null,"coordinates":null,"place":null,"retweet_count":\#(index % 50),"favorite_count":0,"#
                    + #""entities":{"hashtags":[{"text":"tag","indices":[\#(index % 100),\#(index % 100 + 4)]}],"symbols":[],"#
                    + #""urls":[],"user_mentions":[{"screen_name":"aym0566x","name":"前田あゆみ","id":\#(866_260_188 + index),"#
                    + #""indices":[0,9]}]},"favorited":false,"retweeted":false,"lang":"ja"}"#)
        }
        return Array(
            (#"{"statuses":["# + statuses.joined(separator: ",")
                + #"],"search_metadata":{"completed_in":0.087,"max_id":505874924095815700,"count":100}}"#).utf8)
    }

    /// About `size` bytes of everything: arrays of floats and integers, objects of strings,
    /// booleans and nulls, nested a few levels deep.
    static func mixed(bytes size: Int) -> [UInt8] {
        var parts: [String] = []
        var total = 0
        var index = 0
        while total < size - 512 {
            let part =
                #"{"id":\#(index),"score":\#(Double(index) * 0.731 + 0.5),"ok":\#(index % 2 == 0),"note":null,"#
                + #""tags":["alpha","beta-\#(index % 13)","gamma"],"coords":[\#(Double(index) / 7),-\#(Double(index) / 3),1e-3],"#
                + #""nested":{"name":"item \#(index)","path":"/a/b/\#(index)","flags":{"x":true,"y":false,"depth":[[1],[2,[3]]]}}}"#
            parts.append(part)
            total += part.utf8.count + 1
            index += 1
        }
        return Array(("[" + parts.joined(separator: ",") + "]").utf8)
    }
}
