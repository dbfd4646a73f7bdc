"""The faults, each a scenario by name: what is done at the fault, what at healing, and
whether the whole service is expected down meanwhile (the checker then does not time flags
due during it)."""


class Scenario:
    def __init__(self, name, what, inject, heal, outage=False):
        self.name = name
        self.what = what
        self.inject = inject
        self.heal = heal
        self.outage = outage


def all_scenarios(net, stack):
    s = stack
    return [
        Scenario("kill-gateway", "kill -9 of the gateway, restarted at healing",
                 lambda: s.gateway.kill9(), lambda: s.gateway.start(), outage=True),
        Scenario("kill-rules", "kill -9 of rules replica a, restarted at healing",
                 lambda: s.rules["rules-a"].kill9(), lambda: s.rules["rules-a"].start()),
        Scenario("kill-search", "kill -9 of search replica a, restarted at healing",
                 lambda: s.search["search-a"].kill9(), lambda: s.search["search-a"].start()),
        Scenario("kill-postgres", "kill -9 of every PostgreSQL process, restarted at healing",
                 lambda: s.pg.kill9(), lambda: s.pg.start(), outage=True),
        Scenario("vanish-rules", "rules replica a's link down (no RST), then up",
                 lambda: net.vanish("rules-a"), lambda: net.appear("rules-a")),
        Scenario("vanish-search", "search replica a's link down, then up",
                 lambda: net.vanish("search-a"), lambda: net.appear("search-a")),
        Scenario("vanish-postgres", "PostgreSQL's link down, then up",
                 lambda: net.vanish("postgres"), lambda: net.appear("postgres"), outage=True),
        Scenario("vanish-gateway", "the gateway's link down (clients and backends alike lose it, "
                 "no RST), then up",
                 lambda: net.vanish("gateway"), lambda: net.appear("gateway"), outage=True),
        Scenario("cut-gateway-rules", "partition: gateway | rules replica a",
                 lambda: net.cut(["gateway"], ["rules-a"]), lambda: net.heal(["gateway"], ["rules-a"])),
        Scenario("cut-rules-postgres", "partition: rules replica a | PostgreSQL (a still takes calls)",
                 lambda: net.cut(["rules-a"], ["postgres"]), lambda: net.heal(["rules-a"], ["postgres"])),
        Scenario("cut-gateway-search", "partition: gateway | both search replicas",
                 lambda: net.cut(["gateway"], ["search-a", "search-b"]),
                 lambda: net.heal(["gateway"], ["search-a", "search-b"])),
        Scenario("cut-client-gateway", "partition: client | gateway",
                 lambda: net.cut(["client"], ["gateway"]), lambda: net.heal(["client"], ["gateway"]),
                 outage=True),
        Scenario("slow-rules", "rules replica a stopped (SIGSTOP) for the fault, then SIGCONT",
                 lambda: s.rules["rules-a"].pause(), lambda: s.rules["rules-a"].resume()),
    ]


SHORT = ["kill-rules", "cut-gateway-rules", "vanish-rules"]
