"""Pages: revisions, the revision in use, the trusted-editor list."""

from moodkit import room  # noqa: F401 (fixtures)

from mindos.comms import pages


def test_page_history_and_trust(room):
    pages.save(room, "GeneralOrders", "one", editor="mallory")
    pages.set_trust(room, "re", True)
    pages.save(room, "GeneralOrders", "two", editor="re")
    pages.save(room, "GeneralOrders", "three", editor="mallory")
    shown = pages.show(room, "GeneralOrders", history=True)
    assert shown["in_use"] == 2 and shown["revision"]["body"] == "two" and shown["revisions"] == 3
    assert pages.show(room, "GeneralOrders", revision=3)["revision"]["trusted"] is False
    pages.set_trust(room, "re", False)
    assert pages.show(room, "GeneralOrders")["in_use"] is None
    assert pages.listing(room)["editors"] == [{"editor": "re", "trusted": False}]
