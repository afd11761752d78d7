import Logging
package import MemoryPressureKit

/// `type: manual` — pressure only when the application signals it (`Pipeline.simulateMemoryPressure(_:)` works
/// whatever the source).
package struct ManualPressurePlugin: PipelinePlugin {
    /// "manual".
    package let type = "manual"

    /// No settings.
    package typealias Settings = MemoryPersistencePlugin.Settings

    /// Makes the plugin.
    package init() {}

    /// No settings.
    package var defaultSettings: Settings { Settings() }

    /// A manual source.
    package func make(_ settings: Settings, context: AssemblyContext) throws -> MemoryPressureComponent {
        MemoryPressureComponent(ManualMemoryPressureSource())
    }
}

/// `type: linux-psi` — the kernel's pressure stall information: a trigger on the cgroup's (or the system's)
/// `memory.pressure`, polling `avg10` where triggers are refused. The default.
///
/// ```yaml
/// source: { type: linux-psi, stall: 150ms, window: 2s, polling_interval: 1s, avg10_threshold: 10 }
/// ```
package struct PSIPressurePlugin: PipelinePlugin {
    /// "linux-psi".
    package let type = "linux-psi"

    /// The settings, with RegistryKit's defaults.
    package struct Settings: Decodable, Sendable {
        /// The source's configuration.
        package var configuration: PSIMemoryPressureSource.Configuration

        /// The keys.
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case path, stall, window
            case usesTrigger = "uses_trigger"
            case pollingInterval = "polling_interval"
            case avg10Threshold = "avg10_threshold"
        }

        /// RegistryKit's defaults: a 150 ms stall in 2 s, polling every second at 10 %.
        package init() {
            configuration = PSIMemoryPressureSource.Configuration()
        }

        /// Decodes the settings; the window must be 500 ms to 10 s (the kernel's bounds).
        package init(from decoder: any Decoder) throws {
            self.init()
            let settings = try decoder.settings(CodingKeys.self)
            configuration.path = try settings.decode(.path, as: String.self)
            configuration.stall = try settings.duration(.stall, default: configuration.stall)
            configuration.window = try settings.duration(.window, default: configuration.window)
            if configuration.window < .milliseconds(500) || configuration.window > .seconds(10) {
                try settings.invalid(
                    .window, "the kernel accepts a window of 500ms to 10s (found \(configuration.window))")
            }
            if configuration.stall > configuration.window {
                try settings.invalid(
                    .stall, "the stall must fit in the window (\(configuration.stall) > \(configuration.window))")
            }
            configuration.usesTrigger = try settings.decode(.usesTrigger, default: configuration.usesTrigger)
            configuration.pollingInterval = try settings.duration(
                .pollingInterval, default: configuration.pollingInterval)
            configuration.avg10Threshold = try settings.decode(
                .avg10Threshold, default: configuration.avg10Threshold, where: { $0 > 0 && $0 <= 100 },
                "must be a percentage above 0, at most 100")
        }
    }

    /// Makes the plugin.
    package init() {}

    /// RegistryKit's defaults.
    package var defaultSettings: Settings { Settings() }

    /// A PSI source.
    package func make(_ settings: Settings, context: AssemblyContext) throws -> MemoryPressureComponent {
        var logger = context.logger
        logger[metadataKey: "part"] = "memory-pressure"
        return MemoryPressureComponent(PSIMemoryPressureSource(configuration: settings.configuration, logger: logger))
    }
}

/// `type: resident-limit` — pressure when this process's resident memory, or its cgroup's usage, passes a limit.
///
/// ```yaml
/// source: { type: resident-limit, resident: 512MB, interval: 1s }      # or cgroup_fraction: 0.9
/// ```
package struct ResidentLimitPressurePlugin: PipelinePlugin {
    /// "resident-limit".
    package let type = "resident-limit"

    /// The settings: exactly one of `resident` and `cgroup_fraction`.
    package struct Settings: Decodable, Sendable {
        /// The source's configuration.
        package var configuration: ResidentMemoryPressureSource.Configuration

        /// The keys.
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case resident
            case cgroupFraction = "cgroup_fraction"
            case interval
        }

        /// 90 % of the cgroup's limit, checked every second.
        package init() {
            configuration = .init(limit: .cgroupFraction(0.9))
        }

        /// Decodes the settings.
        package init(from decoder: any Decoder) throws {
            self.init()
            let settings = try decoder.settings(CodingKeys.self)
            switch (settings.contains(.resident), settings.contains(.cgroupFraction)) {
            case (true, true):
                try settings.invalidMapping("give either 'resident' or 'cgroup_fraction', not both")
            case (true, false):
                if let bytes = try settings.decode(.resident, as: ByteCountSetting.self)?.bytes {
                    if bytes > 0 {
                        configuration.limit = .residentBytes(bytes)
                    } else {
                        try settings.invalid(.resident, "must be more than zero (found \(bytes))")
                    }
                }
            case (false, true):
                let fraction = try settings.decode(
                    .cgroupFraction, default: 0.9, where: { $0 > 0 && $0 <= 1 }, "must be above 0, at most 1")
                configuration.limit = .cgroupFraction(fraction)
            case (false, false):
                break
            }
            configuration.interval = try settings.duration(.interval, default: configuration.interval)
        }
    }

    /// Makes the plugin.
    package init() {}

    /// 90 % of the cgroup's limit.
    package var defaultSettings: Settings { Settings() }

    /// A resident-memory source.
    package func make(_ settings: Settings, context: AssemblyContext) throws -> MemoryPressureComponent {
        var logger = context.logger
        logger[metadataKey: "part"] = "memory-pressure"
        return MemoryPressureComponent(
            ResidentMemoryPressureSource(configuration: settings.configuration, logger: logger))
    }
}
