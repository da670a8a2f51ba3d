// SwiftUI, as much as the sample app (Examples/SigilDemo) uses, with the availability Apple documents
// for each (every one older than Sigil's minimum, iOS 17 / macOS 14). Views here are values with no
// behaviour: the check type-checks the app's code, nothing runs.

/// Mimics `View`, `@MainActor @preconcurrency protocol View` (iOS 13.0, macOS 10.15):
/// https://developer.apple.com/documentation/swiftui/view
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
@MainActor @preconcurrency public protocol View {
    associatedtype Body: View
    @ViewBuilder var body: Body { get }
}

/// Mimics `Never: View`, the body of primitive views.
extension Never: View {
    public var body: Never { stub() }
}

/// Mimics `ViewBuilder` (iOS 13.0, macOS 10.15): https://developer.apple.com/documentation/swiftui/viewbuilder
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
@resultBuilder public struct ViewBuilder {
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<(repeat each Content)> {
        stub()
    }
    public static func buildIf<Content: View>(_ content: Content?) -> Content? { content }
    public static func buildEither<First: View, Second: View>(first: First) -> _ConditionalContent<First, Second> {
        stub()
    }
    public static func buildEither<First: View, Second: View>(second: Second) -> _ConditionalContent<First, Second> {
        stub()
    }
}

/// Mimics `Optional: View where Wrapped: View`.
extension Optional: View where Wrapped: View {
    public var body: Never { stub() }
}

/// Mimics `TupleView` (iOS 13.0, macOS 10.15): https://developer.apple.com/documentation/swiftui/tupleview
public struct TupleView<T>: View {
    public var body: Never { stub() }
}

/// Mimics `_ConditionalContent`, what `if`/`else` in a view builder makes.
public struct _ConditionalContent<TrueContent, FalseContent>: View {
    public var body: Never { stub() }
}

/// Mimics `Text` (iOS 13.0, macOS 10.15): https://developer.apple.com/documentation/swiftui/text
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct Text: View {
    /// Mimics `init<S>(_ content: S) where S: StringProtocol`.
    public init<S: StringProtocol>(_ content: S) {}
    public var body: Never { stub() }
}

/// Mimics `Button` (iOS 13.0, macOS 10.15): https://developer.apple.com/documentation/swiftui/button
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct Button<Label: View>: View {
    public var body: Never { stub() }
}

@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
extension Button where Label == Text {
    /// Mimics `init<S>(_ title: S, action: @escaping @MainActor () -> Void) where S: StringProtocol`:
    /// https://developer.apple.com/documentation/swiftui/button/init(_:action:)-lpm7
    public init<S: StringProtocol>(_ title: S, action: @escaping @MainActor () -> Void) {}
}

/// Mimics `VStack` (iOS 13.0, macOS 10.15): https://developer.apple.com/documentation/swiftui/vstack
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct VStack<Content: View>: View {
    /// Mimics `init(alignment:spacing:content:)`.
    public init(spacing: Double? = nil, @ViewBuilder content: () -> Content) {}
    public var body: Never { stub() }
}

/// A view with a modifier applied.
public struct ModifiedContent<Content, Modifier>: View {
    public var body: Never { stub() }
}

@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
extension View {
    /// Mimics `func padding(_ length: CGFloat? = nil) -> some View`:
    /// https://developer.apple.com/documentation/swiftui/view/padding(_:_:)
    public func padding() -> ModifiedContent<Self, Never> { stub() }

    /// Mimics `func disabled(_ disabled: Bool) -> some View`:
    /// https://developer.apple.com/documentation/swiftui/view/disabled(_:)
    public func disabled(_ disabled: Bool) -> ModifiedContent<Self, Never> { stub() }

    /// Mimics `func task(priority:_:) -> some View` (iOS 15.0, macOS 12.0):
    /// https://developer.apple.com/documentation/swiftui/view/task(priority:_:)
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, macCatalyst 15.0, *)
    public func task(_ action: @escaping @MainActor @Sendable () async -> Void) -> ModifiedContent<Self, Never> {
        stub()
    }
}

/// Mimics `State` (iOS 13.0, macOS 10.15): https://developer.apple.com/documentation/swiftui/state
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
@propertyWrapper public struct State<Value> {
    public init(wrappedValue value: Value) {}
    public var wrappedValue: Value {
        get { stub() }
        nonmutating set { stub() }
    }
}

/// Mimics `Scene` (iOS 14.0, macOS 11.0): https://developer.apple.com/documentation/swiftui/scene
@available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
@MainActor @preconcurrency public protocol Scene {
    associatedtype Body: Scene
    @SceneBuilder var body: Body { get }
}

extension Never: Scene {}

/// Mimics `SceneBuilder` (iOS 14.0, macOS 11.0): https://developer.apple.com/documentation/swiftui/scenebuilder
@available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
@resultBuilder public struct SceneBuilder {
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

/// Mimics `WindowGroup` (iOS 14.0, macOS 11.0): https://developer.apple.com/documentation/swiftui/windowgroup
@available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
public struct WindowGroup<Content: View>: Scene {
    /// Mimics `init(content:)`.
    public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { stub() }
}

/// Mimics `App` (iOS 14.0, macOS 11.0): https://developer.apple.com/documentation/swiftui/app
@available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
@MainActor @preconcurrency public protocol App {
    associatedtype Body: Scene
    @SceneBuilder var body: Body { get }
    init()
}

@available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
extension App {
    /// Mimics `static func main()`, what `@main` calls.
    @MainActor public static func main() { stub() }
}
