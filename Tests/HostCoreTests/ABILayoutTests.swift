import Foundation
import ServiceABI
import ServiceVocabulary
import TestSupport
import Testing

@testable import HostCore

/// ABI version 1's layouts, checked from Swift with the same numbers servicehost/layout.h
/// pins for C: a Swift host and a C plugin must agree on every offset.
@Suite struct ABILayoutTests {
    /// `T`'s size is `v1Size` (none of the structs has grown yet) and each member is at its
    /// version-1 offset.
    private func check<T>(
        _ type: T.Type, _ v1Size: UInt32, _ members: [(PartialKeyPath<T>, Int)],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(MemoryLayout<T>.size == Int(v1Size), "\(T.self) size", sourceLocation: sourceLocation)
        for (path, offset) in members {
            #expect(MemoryLayout<T>.offset(of: path) == offset, "\(T.self) \(path)", sourceLocation: sourceLocation)
        }
    }

    private func check<T>(
        _ type: T.Type, _ v1Size: Int, _ members: [(PartialKeyPath<T>, Int)],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        check(type, UInt32(v1Size), members, sourceLocation: sourceLocation)
    }

    @Test func everyRuntimeStruct_hasItsVersion1SizeAndOffsets() {
        check(
            sh_host_offer.self, SH_HOST_OFFER_SIZE_V1,
            [
                (\sh_host_offer.size, 0), (\sh_host_offer.version, 4), (\sh_host_offer.abi_min, 8),
                (\sh_host_offer.abi_max, 12), (\sh_host_offer.host_version, 16),
            ])
        check(
            sh_plugin.self, SH_PLUGIN_SIZE_V1,
            [
                (\sh_plugin.size, 0), (\sh_plugin.version, 4), (\sh_plugin.abi_version, 8),
                (\sh_plugin.service_count, 12), (\sh_plugin.services, 16), (\sh_plugin.error, 24),
            ])
        check(
            sh_service.self, SH_SERVICE_SIZE_V1,
            [
                (\sh_service.size, 0), (\sh_service.version, 4), (\sh_service.id, 8),
                (\sh_service.context, 16), (\sh_service.attach, 24), (\sh_service.handle_event, 32),
            ])
        // Version 2 appended three members after the 112 bytes of version 1, version 3 one
        // (control) after the 136 bytes of version 2, version 4 one (request) after the 144 of 3.
        check(
            sh_host.self, SH_HOST_SIZE_V4,
            [
                (\sh_host.size, 0), (\sh_host.version, 4), (\sh_host.host_data, 8),
                (\sh_host.host_version, 16), (\sh_host.log, 24), (\sh_host.post, 32), (\sh_host.app_state, 40),
                (\sh_host.store_get, 48), (\sh_host.store_set, 56), (\sh_host.store_remove, 64),
                (\sh_host.store_keys, 72), (\sh_host.get_extension, 80), (\sh_host.subscribe, 88),
                (\sh_host.unsubscribe, 96), (\sh_host.register_for_remote_notifications, 104),
                (\sh_host.notification_settings, Int(SH_HOST_SIZE_V1)), (\sh_host.request_authorization, 120),
                (\sh_host.set_scene_restoration, 128), (\sh_host.control, Int(SH_HOST_SIZE_V2)),
                (\sh_host.request, Int(SH_HOST_SIZE_V3)),
            ])
        check(
            sh_event.self, SH_EVENT_SIZE_V1,
            [
                (\sh_event.size, 0), (\sh_event.version, 4), (\sh_event.kind, 8), (\sh_event.app_state, 12),
                (\sh_event.seq, 16), (\sh_event.data, 24), (\sh_event.completion, 32),
            ])
        check(
            sh_completion.self, SH_COMPLETION_SIZE_V1,
            [
                (\sh_completion.size, 0), (\sh_completion.version, 4), (\sh_completion.host_data, 8),
                (\sh_completion.complete, 16),
            ])
        check(
            sh_json.self, SH_JSON_SIZE_V1,
            [
                (\sh_json.size, 0), (\sh_json.version, 4), (\sh_json.nodes, 8), (\sh_json.count, 16),
            ])
        check(
            sh_json_node.self, 40,
            [
                (\sh_json_node.type, 0), (\sh_json_node.count, 4), (\sh_json_node.next, 8),
                (\sh_json_node.reserved, 12), (\sh_json_node.string, 16), (\sh_json_node.length, 24),
                (\sh_json_node.number, 32),
            ])
        check(
            sh_launch_options.self, SH_LAUNCH_OPTIONS_SIZE_V2,
            [
                (\sh_launch_options.size, 0), (\sh_launch_options.version, 4), (\sh_launch_options.flags, 8),
                (\sh_launch_options.reserved, 12), (\sh_launch_options.settings_json, 16),
                (\sh_launch_options.settings_len, 24), (\sh_launch_options.notification, 32),
                (\sh_launch_options.url, 40), (\sh_launch_options.activity, 48),
                (\sh_launch_options.restored_state, Int(SH_LAUNCH_OPTIONS_SIZE_V1)),
                (\sh_launch_options.restored_state_len, 64), (\sh_launch_options.restored_from_id, 72),
                (\sh_launch_options.restored_from_version, 80),
            ])
        check(
            sh_push.self, SH_PUSH_SIZE_V1,
            [
                (\sh_push.size, 0), (\sh_push.version, 4), (\sh_push.flags, 8), (\sh_push.reserved, 12),
                (\sh_push.json, 16), (\sh_push.json_len, 24), (\sh_push.parsed, 32), (\sh_push.action_id, 40),
            ])
        check(
            sh_device_token.self, SH_DEVICE_TOKEN_SIZE_V1,
            [
                (\sh_device_token.size, 0), (\sh_device_token.version, 4), (\sh_device_token.bytes, 8),
                (\sh_device_token.length, 16), (\sh_device_token.hex, 24),
            ])
        check(
            sh_error_info.self, SH_ERROR_INFO_SIZE_V1,
            [
                (\sh_error_info.size, 0), (\sh_error_info.version, 4), (\sh_error_info.message, 8),
            ])
        check(
            sh_open_url.self, SH_OPEN_URL_SIZE_V1,
            [
                (\sh_open_url.size, 0), (\sh_open_url.version, 4), (\sh_open_url.flags, 8),
                (\sh_open_url.reserved, 12), (\sh_open_url.url, 16), (\sh_open_url.scheme, 24),
                (\sh_open_url.host, 32),
            ])
        check(
            sh_user_activity.self, SH_USER_ACTIVITY_SIZE_V1,
            [
                (\sh_user_activity.size, 0), (\sh_user_activity.version, 4), (\sh_user_activity.flags, 8),
                (\sh_user_activity.reserved, 12), (\sh_user_activity.type, 16),
                (\sh_user_activity.webpage_url, 24), (\sh_user_activity.user_info_json, 32),
                (\sh_user_activity.user_info_len, 40), (\sh_user_activity.user_info, 48),
            ])
        // Version 2 appended the parsed tape after the 40 bytes of version 1.
        check(
            sh_notification.self, SH_NOTIFICATION_SIZE_V2,
            [
                (\sh_notification.size, 0), (\sh_notification.version, 4), (\sh_notification.name, 8),
                (\sh_notification.sender, 16), (\sh_notification.json, 24), (\sh_notification.json_len, 32),
                (\sh_notification.parsed, Int(SH_NOTIFICATION_SIZE_V1)),
            ])
        check(
            sh_notification_settings.self, SH_NOTIFICATION_SETTINGS_SIZE_V1,
            [
                (\sh_notification_settings.size, 0), (\sh_notification_settings.version, 4),
                (\sh_notification_settings.status, 8), (\sh_notification_settings.allowed, 12),
            ])
        check(
            sh_request.self, SH_REQUEST_SIZE_V1,
            [
                (\sh_request.size, 0), (\sh_request.version, 4), (\sh_request.name, 8), (\sh_request.from, 16),
                (\sh_request.json, 24), (\sh_request.json_len, 32), (\sh_request.parsed, 40),
            ])
        check(
            sh_scene.self, SH_SCENE_SIZE_V1,
            [
                (\sh_scene.size, 0), (\sh_scene.version, 4), (\sh_scene.id, 8), (\sh_scene.name, 16),
                (\sh_scene.role, 24), (\sh_scene.state, 32), (\sh_scene.reserved, 36),
                (\sh_scene.configuration, 40), (\sh_scene.settings_json, 48), (\sh_scene.settings_len, 56),
                (\sh_scene.settings, 64),
            ])
        // Version 2 appended restoration_activity after the 48 bytes of version 1.
        check(
            sh_scene_connection_options.self, SH_SCENE_CONNECTION_OPTIONS_SIZE_V2,
            [
                (\sh_scene_connection_options.size, 0), (\sh_scene_connection_options.version, 4),
                (\sh_scene_connection_options.flags, 8), (\sh_scene_connection_options.reserved, 12),
                (\sh_scene_connection_options.url_contexts, 16),
                (\sh_scene_connection_options.url_context_count, 24),
                (\sh_scene_connection_options.user_activities, 32),
                (\sh_scene_connection_options.user_activity_count, 40),
                (\sh_scene_connection_options.restoration_activity, Int(SH_SCENE_CONNECTION_OPTIONS_SIZE_V1)),
            ])
        check(
            sh_scene_configuration.self, SH_SCENE_CONFIGURATION_SIZE_V1,
            [
                (\sh_scene_configuration.size, 0), (\sh_scene_configuration.version, 4),
                (\sh_scene_configuration.name, 8), (\sh_scene_configuration.role, 72),
                (\sh_scene_configuration.settings, 104), (\sh_scene_configuration.settings_capacity, 112),
                (\sh_scene_configuration.settings_len, 120),
            ])
        check(
            sh_scene_connection.self, SH_SCENE_CONNECTION_SIZE_V1,
            [
                (\sh_scene_connection.size, 0), (\sh_scene_connection.version, 4),
                (\sh_scene_connection.scene, 8), (\sh_scene_connection.options, 16),
                (\sh_scene_connection.configuration, 24),
            ])
        check(
            sh_scene_open_url.self, SH_SCENE_OPEN_URL_SIZE_V1,
            [
                (\sh_scene_open_url.size, 0), (\sh_scene_open_url.version, 4), (\sh_scene_open_url.scene, 8),
                (\sh_scene_open_url.url, 16),
            ])
        check(
            sh_scene_user_activity.self, SH_SCENE_USER_ACTIVITY_SIZE_V1,
            [
                (\sh_scene_user_activity.size, 0), (\sh_scene_user_activity.version, 4),
                (\sh_scene_user_activity.scene, 8), (\sh_scene_user_activity.activity, 16),
            ])
    }

    /// The C masks of the manifest groups (`SH_EVENTS_LIFECYCLE`, `SH_EVENTS_PUSH`,
    /// `SH_EVENTS_SCENES`) hold exactly the kinds of ServiceVocabulary's groups, and
    /// `SH_EVENT_WORDS` puts kinds ≥ 64 in the second word of a service record.
    @Test(.timeLimit(.minutes(10))) func theHeaderGroupMasks_matchTheManifestGroups() throws {
        let scratch = try Scratch()
        let source = try scratch.write(
            "masks.c",
            Array(
                """
                #include <servicehost.h>
                #include <stdio.h>
                SH_SERVICE_METADATA(wide, "test.wide", "Wide", "1", SH_EVENT_WORDS(SH_EVENTS_PUSH, SH_EVENT_BIT(70)), 0);
                int main(void) {
                    printf("lifecycle %llu\\npush %llu\\nscenes %llu\\nwide %llu %llu\\n",
                           (unsigned long long)SH_EVENTS_LIFECYCLE, (unsigned long long)SH_EVENTS_PUSH,
                           (unsigned long long)SH_EVENTS_SCENES, (unsigned long long)wide.events[0],
                           (unsigned long long)wide.events[1]);
                    return 0;
                }
                """.utf8))
        let program = scratch.file("masks")
        let built = try Command.run(
            "/usr/bin/env",
            [
                "cc", "-std=c11", "-Wall", "-Werror", "-I", Repository.abiInclude,
                source, "-o", program,
            ])
        #expect(built.status == 0, "\(built.stderr)")
        var printed: [String: [UInt64]] = [:]
        for line in try Command.run(program, []).stdout.split(separator: "\n") {
            let words = line.split(separator: " ")
            printed[String(words[0])] = words.dropFirst().compactMap { UInt64($0) }
        }
        func mask(_ group: EventGroup) -> UInt64 {
            group.kinds.reduce(0) { $0 | (UInt64(1) << UInt64($1.rawValue)) }
        }
        #expect(printed["lifecycle"] == [mask(.lifecycle)])
        #expect(printed["push"] == [mask(.push)])
        #expect(printed["scenes"] == [mask(.scenes)])
        #expect(printed["wide"] == [mask(.push), UInt64(1) << 6])
    }
}

/// The loader's reading rule for structs a plugin hands over.
@Suite struct ABIStructTests {
    /// What a version-2 `sh_plugin` could look like in a newer host: version 1, then more.
    struct GrownPlugin {
        var v1: sh_plugin
        var homepage: UInt64
    }

    /// A buffer of `count` bytes of 0xAB whose first member (the size) says `size`.
    private func garbage(_ count: Int, size: UInt32) -> UnsafeMutableRawPointer {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 8)
        raw.initializeMemory(as: UInt8.self, repeating: 0xAB, count: count)
        raw.storeBytes(of: size, as: UInt32.self)
        return raw
    }

    @Test func aStructThatCoversVersion1_isRead_andMembersBeyondItsSizeReadAsZero() throws {
        let raw = garbage(64, size: SH_PLUGIN_SIZE_V1)
        defer { raw.deallocate() }
        let read = try ABIStruct.read(raw.assumingMemoryBound(to: GrownPlugin.self), v1Size: SH_PLUGIN_SIZE_V1)
        #expect(read.v1.size == SH_PLUGIN_SIZE_V1)
        #expect(read.v1.abi_version == 0xABAB_ABAB)
        #expect(read.homepage == 0)  // not the 0xAB bytes that follow the plugin's struct
    }

    @Test func aStructSmallerThanVersion1_isRefusedNamingBothSizes() {
        let raw = garbage(64, size: SH_PLUGIN_SIZE_V1 - 8)
        defer { raw.deallocate() }
        #expect(throws: ABIStruct.TooSmall.self) {
            try ABIStruct.read(raw.assumingMemoryBound(to: sh_plugin.self), v1Size: SH_PLUGIN_SIZE_V1)
        }
    }
}
