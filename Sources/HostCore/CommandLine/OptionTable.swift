/// One command-line option: its name, the value it takes, its help, and what it does to the
/// options it fills in. Every command's options are a table of these, which drives both the
/// parser and `--help` (and is what a shell-completion or man-page generator would read).
public struct CommandOption<Options>: Sendable {
    /// What follows the option's name.
    public enum Value: Sendable, Equatable {
        /// A flag: `--strict`. Given a value (`--strict=no`), it is an error.
        case none
        /// A value, inline or as the next argument: `--trace FILE`, `--trace=FILE`.
        case required(placeholder: String)
        /// A value only inline, `--tap=ACTION`; `--tap` alone leaves the next argument alone.
        case optional(placeholder: String)
    }

    /// `--name`.
    public let name: String
    /// The value it takes.
    public let value: Value
    /// What it does, for `--help`; a line break starts a new help line.
    public let help: String
    /// The words its value may be, when it takes one of a fixed set (`--log-level`): what
    /// shell completion offers and the man page lists. Empty for a free value.
    public var values: [String] { listValues() }
    // Listed only when asked (completion, the man page): building each choice's word list
    // while the table is built instantiated an array type per choice at every start.
    private let listValues: @Sendable () -> [String]
    /// Applies the option to `options`; the text is the value ("" for a flag, nil for an
    /// optional value not given). Its errors say what is wrong with the value; the table
    /// names the option.
    let apply: @Sendable (inout Options, String?) throws(UsageError) -> Void

    init(
        name: String, value: Value, help: String, values: [String] = [],
        apply: @escaping @Sendable (inout Options, String?) throws(UsageError) -> Void
    ) {
        self.init(name: name, value: value, help: help, listValues: { values }, apply: apply)
    }

    private init(
        name: String, value: Value, help: String, listValues: @escaping @Sendable () -> [String],
        apply: @escaping @Sendable (inout Options, String?) throws(UsageError) -> Void
    ) {
        self.name = name
        self.value = value
        self.help = help
        self.listValues = listValues
        self.apply = apply
    }

    /// A flag.
    public static func flag(
        _ name: String, _ help: String,
        _ apply: @escaping @Sendable (inout Options) -> Void
    ) -> CommandOption {
        CommandOption(name: name, value: .none, help: help) { options, _ in apply(&options) }
    }

    /// An option that takes a value, named `placeholder` in the help.
    public static func value(
        _ name: String, _ placeholder: String, _ help: String,
        _ apply: @escaping @Sendable (inout Options, String) throws(UsageError) -> Void
    ) -> CommandOption {
        CommandOption(name: name, value: .required(placeholder: placeholder), help: help) {
            options, text throws(UsageError) in
            try apply(&options, text ?? "")
        }
    }

    /// An option whose value is one of the cases of `T`, as `word` spells them; `what` names
    /// the value in the error ("unknown level 'loud' (use error, warn, info or debug)").
    public static func choice<T: CaseIterable & SendableMetatype>(
        _ name: String, _ placeholder: String, _ what: String, _ help: String,
        _ word: @escaping @Sendable (T) -> String,
        _ apply: @escaping @Sendable (inout Options, T) -> Void
    ) -> CommandOption {
        CommandOption(
            name: name, value: .required(placeholder: placeholder), help: help, listValues: { T.allCases.map(word) },
            apply: { options, text throws(UsageError) in apply(&options, try OptionValue.choice(text ?? "", what, word))
            })
    }

    /// This option filling in the `Options` inside larger options: a command that takes some
    /// of another's options (`host check` takes the run's `--plugins` and `--config`), so
    /// both are one entry of one table.
    public func lifted<Outer>(_ path: WritableKeyPath<Outer, Options> & Sendable) -> CommandOption<Outer> {
        let apply = self.apply
        // Value is nested in the generic type: the same case, of the outer options' Value.
        let outerValue: CommandOption<Outer>.Value =
            switch value {
            case .none: .none
            case .required(let placeholder): .required(placeholder: placeholder)
            case .optional(let placeholder): .optional(placeholder: placeholder)
            }
        return CommandOption<Outer>(name: name, value: outerValue, help: help, listValues: listValues) {
            outer, text throws(UsageError) in
            try apply(&outer[keyPath: path], text)
        }
    }

    /// An option whose value may only be given inline (`--tap` or `--tap=ACTION`).
    public static func optionalValue(
        _ name: String, _ placeholder: String, _ help: String,
        _ apply: @escaping @Sendable (inout Options, String?) throws(UsageError) -> Void
    ) -> CommandOption {
        CommandOption(name: name, value: .optional(placeholder: placeholder), help: help, apply: apply)
    }

    /// `--name VALUE`, `--name [VALUE]` or `--name`: how the help shows it.
    public var synopsis: String {
        switch value {
        case .none: name
        case .required(let placeholder): "\(name) \(placeholder)"
        case .optional(let placeholder): "\(name) [\(placeholder)]"
        }
    }
}

/// The options of one command (`host`, `host inspect`, `host ctl`, `host ctl activity`, …).
///
/// Parsing rules, the same for every command: `--name value` and `--name=value` are the same;
/// a flag given a value is an error; `--` ends the options; `--help` and `-h` ask for help;
/// an unknown option is an error that suggests the nearest known one.
public struct OptionTable<Options>: Sendable {
    /// The command, as messages name it ("ctl activity"); nil for `host` itself.
    public let command: String?
    /// The options, in the order the help lists them.
    public let options: [CommandOption<Options>]

    /// A table for `command`.
    public init(_ command: String?, _ options: [CommandOption<Options>]) {
        self.command = command
        self.options = options
    }

    /// The options and the operands found among `arguments`.
    public struct Parsed {
        /// The options, applied over the ones given to `parse`.
        public var options: Options
        /// The other arguments, in order.
        public var operands: [String]
    }

    /// Applies every option in `arguments` to `options`; the rest are operands. With
    /// `untilOperand`, stops at the first operand and leaves it, and all after it, in
    /// `arguments` (`host ctl [options] COMMAND …`). Throws `UsageError.help` for `--help`.
    public func parse(
        _ arguments: inout ArraySlice<String>, into options: inout Options,
        untilOperand: Bool = false
    ) throws(UsageError) -> [String] {
        var operands: [String] = []
        while let argument = arguments.first {
            if argument == "--" {
                arguments.removeFirst()
                operands += arguments
                arguments = []
                break
            }
            guard Self.isOption(argument) else {
                if untilOperand { break }
                operands.append(arguments.removeFirst())
                continue
            }
            arguments.removeFirst()
            if argument == "--help" || argument == "-h" { throw UsageError.help }
            let (name, inline) = Self.split(argument)
            guard let option = self.options.first(where: { $0.name == name }) else { throw unknownOption(name) }
            switch option.value {
            case .none:
                if let inline { throw error("\(name) is a flag and takes no value (given '\(inline)')") }
                try apply(option, "", to: &options)
            case .required:
                guard let text = inline ?? arguments.popFirst() else { throw error("\(name) needs a value") }
                try apply(option, text, to: &options)
            case .optional:
                try apply(option, inline, to: &options)
            }
        }
        return operands
    }

    /// Applies `option`; a bad value's error gets the option's name in front.
    private func apply(_ option: CommandOption<Options>, _ text: String?, to options: inout Options) throws(UsageError)
    {
        do { try option.apply(&options, text) } catch { throw self.error("\(option.name): \(error.message)") }
    }

    /// Parses all of `arguments` from `defaults`.
    public func parse(_ arguments: [String], from defaults: Options) throws(UsageError) -> Parsed {
        var rest = arguments[...]
        var options = defaults
        let operands = try parse(&rest, into: &options)
        return Parsed(options: options, operands: operands)
    }

    /// An error about this command's arguments: "ctl activity: …".
    public func error(_ message: String) -> UsageError {
        UsageError(command.map { "\($0): \(message)" } ?? message)
    }

    /// The option lines of the help: the synopsis, then the help from column 28 (on the next
    /// line when the synopsis is too long).
    public var help: String {
        options.map { option in
            let lines = option.help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let indent = String(repeating: " ", count: 28)
            var text = "  " + option.synopsis
            if text.count > 26 {
                text += "\n" + indent
            } else {
                text += String(repeating: " ", count: 28 - text.count)
            }
            return text + lines.joined(separator: "\n" + indent)
        }.joined(separator: "\n")
    }

    /// "unknown option --stirct; did you mean '--strict'?".
    private func unknownOption(_ name: String) -> UsageError {
        error("unknown option \(name)" + Suggestion.didYouMean(name, among: self.options.map(\.name) + ["--help"]))
    }

    /// Options start with a dash; "-" alone is an operand (standard input), and so is a word
    /// with one dash, which no command takes as an option (`host ctl token-error -1`).
    static func isOption(_ argument: String) -> Bool {
        argument.hasPrefix("--") || argument == "-h"
    }

    /// `--name=value` as its name and value; any other argument as itself and nil.
    static func split(_ argument: String) -> (name: String, inline: String?) {
        guard let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
