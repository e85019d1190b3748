import Dispatch

/// The connected clients, by the id each was given when it connected.
/// Broker-confined (a value the actor holds).
struct SessionTable {
    private var byID: [Int: Session] = [:]
    private var nextID = 1

    var count: Int { byID.count }
    var isEmpty: Bool { byID.isEmpty }
    var all: Dictionary<Int, Session>.Values { byID.values }

    /// The clients that asked for `authenticators.added/removed/changed`.
    var watchers: [Session] { byID.values.filter(\.watching) }

    /// Every request in flight, of every client.
    var requestsInFlight: [InFlightRequest] { byID.values.flatMap { $0.inFlight.values } }

    /// A new client: the session `make` builds around its id.
    mutating func add(_ make: (Int) -> Session) -> Session {
        let session = make(nextID)
        nextID += 1
        byID[session.id] = session
        return session
    }

    mutating func remove(_ session: Session) {
        byID[session.id] = nil
    }
}
