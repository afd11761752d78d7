#if canImport(SwiftUI)
public import SwiftUI

/// A resource model's content, with a progress view while there is none and the error when its load failed:
/// Siesta's `ResourceStatusOverlay`, in one line of use.
///
/// ```swift
/// struct ItemsView: View {
///     @State private var items = ResourceModel<[Item]>(service.resource("/items"))
///     var body: some View {
///         ResourceStatusView(items) { list in List(list) { Text($0.name) } }
///     }
/// }
/// ```
///
/// The logic is the model's: this view only reads it. Linux has no SwiftUI, so this file is compiled on Apple
/// platforms only.
public struct ResourceStatusView<Content: Sendable, Shown: View>: View {
    private let model: ResourceModel<Content>
    private let shown: (Content) -> Shown

    /// Shows `model`'s content with `shown`.
    public init(_ model: ResourceModel<Content>, @ViewBuilder content shown: @escaping (Content) -> Shown) {
        self.model = model
        self.shown = shown
    }

    /// The content, else the error, else a progress view.
    public var body: some View {
        if let content = model.content {
            shown(content)
        } else if let error = model.error {
            Text(error.description)
        } else {
            ProgressView()
        }
    }
}
#endif
