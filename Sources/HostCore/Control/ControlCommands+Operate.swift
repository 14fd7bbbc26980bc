import ServiceJSON

/// The rows of the commands that operate the host (`list --all` is `list`'s row).
extension ControlCommands {
    static let operating: [ControlCommandSpec] = [
        ControlCommandSpec(
            "stats", grant: .all, usage: [CtlCommand.UsageLine(14, "stats [SERVICE]")],
            arguments: { arguments throws(UsageError) in
                let operands = try OptionTable<Void>("ctl stats", []).parse(arguments.arguments, from: ()).operands
                guard operands.count <= 1 else { throw UsageError("ctl stats: expected [SERVICE]") }
                return operands.first.map { [ControlKey.service.rawValue: .string($0)] } ?? [:]
            },
            decode: { members, _ throws(InputError) in .operate(.stats(service: try members.string(.service))) }),
        ControlCommandSpec(
            "blame", grant: .all, usage: [CtlCommand.UsageLine(14, "blame")],
            arguments: { arguments throws(UsageError) in
                _ = try arguments.operands(0, "no arguments")
                return [:]
            },
            decode: { _, _ in .operate(.blame) }),
        ControlCommandSpec(
            "service", grant: .all,
            usage: [
                CtlCommand.UsageLine(
                    15, "service stop|start|restart|reset-failed ID \(CtlCommand.synopsis(CtlCommand.serviceTable))",
                    options: CtlCommand.OptionsHelp(
                        title: "service", table: CtlCommand.serviceTable.help,
                        manual: CommandSpec(
                            words: ["ctl", "service"], synopsis: "stop|start|restart|reset-failed ID [--force]",
                            summary:
                                "Stops, starts or restarts one service; start loads a service that was never loaded"
                                + " when its file is a loadable plugin; reset-failed starts a service a crash loop"
                                + " marked failed again.",
                            options: CtlCommand.serviceTable.specs,
                            operands: ControlRequest.Operate.ServiceAction.allCases.map(\.rawValue))))
            ],
            arguments: CtlCommand.service,
            decode: { members, _ throws(InputError) in
                let actions = ControlRequest.Operate.ServiceAction.allCases.map(\.rawValue)
                let text = try members.requiredString(.action)
                guard let action = ControlRequest.Operate.ServiceAction(rawValue: text) else {
                    throw InputError("service: unknown action \"\(text)\" (one of \(actions.joined(separator: ", ")))")
                }
                return .operate(
                    .service(action, id: try members.requiredString(.service), force: try members.bool(.force) ?? false)
                )
            }),
        ControlCommandSpec(
            "deploy", grant: .all,
            usage: [
                CtlCommand.UsageLine(
                    15, "deploy DIR|status \(CtlCommand.synopsis(CtlCommand.deployTable))",
                    options: CtlCommand.OptionsHelp(
                        title: "deploy", table: CtlCommand.deployTable.help,
                        manual: CommandSpec(
                            words: ["ctl", "deploy"], synopsis: "DIR [--probation SECS] | status | --cancel",
                            summary:
                                "Verifies the set of plugin files in DIR, switches to it as a reload does and rolls it"
                                + " back if a service fails within the probation; status shows the last generations.",
                            options: CtlCommand.deployTable.specs, operandIsPath: true)))
            ],
            arguments: CtlCommand.deploy,
            decode: { members, _ throws(InputError) in
                switch try members.string(.action) {
                case "status"?: return .operate(.deployStatus)
                case "cancel"?: return .operate(.deployCancel)
                case "digests"?: return .operate(.deployDigests)
                case "verify"?:
                    let path = try members.requiredString(.path)
                    guard path.hasPrefix("/") else {
                        throw InputError("deploy: the bundle \"\(path)\" is not an absolute path")
                    }
                    guard let size = try members.number(.size), size >= 0, size <= Double(Host.maxBundleSize),
                        size == size.rounded()
                    else {
                        throw InputError("deploy: \"size\" must be a whole number of bytes up to \(Host.maxBundleSize)")
                    }
                    let sha256 = try members.requiredString(.sha256)
                    guard sha256.utf8.count == 64,
                        sha256.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0 | 0x20) })
                    else {
                        throw InputError("deploy: \"sha256\" must be 64 hex digits")
                    }
                    return .operate(
                        .deployVerify(
                            path: path, size: Int(size), sha256: sha256,
                            signature: try members.requiredString(.signature)))
                case let other?:
                    throw InputError("deploy: unknown action \"\(other)\" (status, cancel, digests or verify)")
                case nil: break
                }
                let directory = try members.requiredString(.directory)
                guard directory.hasPrefix("/") else {
                    throw InputError("deploy: the directory \"\(directory)\" is not an absolute path")
                }
                let seconds = try members.number(.seconds) ?? DeployStage.defaultProbation
                guard seconds > 0 && seconds <= DeployStage.maxProbation else {
                    throw InputError(
                        "deploy: the probation of \(seconds) s is out of range (more than 0, at most \(Int(DeployStage.maxProbation)))"
                    )
                }
                return .operate(.deploy(directory: directory, probation: seconds))
            }),
        ControlCommandSpec(
            "configure", grant: .all, usage: [CtlCommand.UsageLine(15, "configure ID JSON")],
            arguments: { arguments throws(UsageError) in
                let operands = try arguments.operands(2, "ID JSON (the service's new settings object)")
                let settings: JSONValue
                do { settings = try JSONValue(parsing: operands[1]) } catch {
                    throw UsageError("ctl configure: the settings are not valid JSON: \(error)")
                }
                return [ControlKey.service.rawValue: .string(operands[0]), ControlKey.settings.rawValue: settings]
            },
            decode: { members, maxPayload throws(InputError) in
                let value = try members.optional(.settings)
                if let value { try ControlRequest.checkSize(value, .settings, maxPayload) }
                guard value == nil || value == .null || value?.objectValue != nil else {
                    throw InputError("configure: \"settings\" must be an object (or null for none)")
                }
                return .operate(.configure(id: try members.requiredString(.service), settings: value?.objectValue))
            }),
        ControlCommandSpec(
            "rollback", grant: .all, usage: [CtlCommand.UsageLine(15, "rollback")],
            arguments: { arguments throws(UsageError) in
                _ = try arguments.operands(0, "no arguments")
                return [:]
            },
            decode: { _, _ in .operate(.rollback) }),
        ControlCommandSpec(
            "watch", grant: .connectionOnly,
            usage: [
                CtlCommand.UsageLine(
                    16, "watch \(CtlCommand.synopsis(CtlCommand.watchTable))",
                    options: CtlCommand.OptionsHelp(
                        title: "watch", table: CtlCommand.watchTable.help,
                        manual: CommandSpec(
                            words: ["ctl", "watch"], synopsis: "[--logs]",
                            summary: "Streams trace records (and log lines) until interrupted.",
                            options: CtlCommand.watchTable.specs)))
            ],
            arguments: { arguments throws(UsageError) in
                let parsed = try CtlCommand.watchTable.parse(arguments.arguments, from: CtlCommand.OperateOptions())
                guard parsed.operands.isEmpty else { throw CtlCommand.watchTable.error("expected no arguments") }
                return parsed.options.logs ? [ControlKey.logs.rawValue: true] : [:]
            },
            decode: { members, _ throws(InputError) in .operate(.watch(logs: try members.bool(.logs) ?? false)) }),
    ]
}
