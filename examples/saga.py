"""The classic saga: book a hotel, book a flight, charge the card. The charge fails with a BPMN
error; the error boundary event leads to a compensation throw event, which runs the handlers of
the completed bookings in reverse order of completion (cancel the flight, then the hotel) as
tokens in Compensation mode; then the trip is cancelled.

python -m examples.saga
"""

from __future__ import annotations

from pathlib import Path

from engine.api import Engine
from engine.core.handlers import TaskContext
from engine.errors import BpmnError
from engine.states import InstanceState

SAGA = Path(__file__).parent / "saga.bpmn"


def main(engine: Engine | None = None) -> int:
    own_engine = engine is None
    engine = engine or Engine()
    try:
        done: list[str] = []

        def step(name: str, result: dict[str, object]) -> None:
            @engine.handler(name)
            def run(ctx: TaskContext) -> dict[str, object]:
                print(f"  > {name}")
                done.append(name)
                return result

        step("bookHotel", {"hotel": "Harbour Inn"})
        step("bookFlight", {"flight": "IL 20"})
        step("cancelFlight", {"flightCancelled": True})
        step("cancelHotel", {"hotelCancelled": True})

        @engine.handler("chargeCard")
        def charge_card(ctx: TaskContext) -> None:
            print("  > chargeCard: the card is declined")
            raise BpmnError("CardDeclined", "the card was declined")

        deployment = engine.deploy(SAGA)
        definition = deployment.definitions[0]
        print(f"deployed {definition['key']} version {definition['version']}")
        instance = engine.start_latest("trip_saga")
        compensations = [name for name in done if name.startswith("cancel")]
        print(f"compensation order: {' -> '.join(compensations)}")
        ended = [
            step.node_id
            for path in instance.history()
            for step in path.steps
            if step.node_type == "endEvent"
        ]
        state = instance.state
        print(f"trip_saga {state.value} at {', '.join(ended)}")
        expected = ["cancelFlight", "cancelHotel"]
        return 0 if state is InstanceState.COMPLETED and compensations == expected else 1
    finally:
        if own_engine:
            engine.close()


if __name__ == "__main__":
    raise SystemExit(main())
