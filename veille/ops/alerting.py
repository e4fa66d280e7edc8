"""A failed night is never silent: a Prefect automation per watch notifies its operators (the
``[operators]`` of delivery.toml, never the readers) when a flow run of its deployment ends Failed or
Crashed. The readers get the night's partial dossier, marked partial, from the flow itself.

The message is French and holds no text of the run: the deployment, the flow run's name and id, and
its link in the UI (``ui_url``, from the server's PREFECT_UI_URL — `veille server` and `make server`
set it). The state message is left out on purpose: a failed step's message may quote a path of the
worker or a document's text, and the link shows it to whoever may see it.

The automation runs on the Prefect server, so each channel's Apprise URL (read from the
environment of ``veille setup``, never from a file) is stored as a notification block — a secret
field, shown masked in the UI. The block type is Prefect's Slack Webhook: its URL goes to Apprise
unchanged, so any Apprise URL (mailto://, json://, mmost://, msteams://…) works; Prefect ships no
generic Apprise block. Everything is created or updated by name: running setup twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from veille.delivery.config import DeliveryConfig
from veille.delivery.send import with_recipients

if TYPE_CHECKING:
    from prefect.client.orchestration import SyncPrefectClient
    from prefect.events.schemas.automations import AutomationCore

__all__ = [
    "FAILED_STATES",
    "automation_name",
    "channel_urls",
    "ensure_failure_automation",
    "former_reader_blocks",
    "remove_blocks",
    "remove_failure_automation",
    "same_automation",
]

FAILED_STATES = ("prefect.flow-run.Failed", "prefect.flow-run.Crashed")
_BODY = (
    "La nuit de la veille « {{ deployment.name }} » "
    '{% if flow_run.state.name == "Crashed" %}s\'est interrompue{% else %}a échoué{% endif %} : '
    "exécution {{ flow_run.name }} ({{ flow_run.id }}).\n"
    "Si un dossier partiel a pu être écrit, ses lecteurs l'ont reçu, marqué partiel.\n"
    "Détails, journaux et relance (Retry) dans l'interface Prefect : {{ flow_run|ui_url }}"
)


@dataclass(frozen=True)
class Channel:
    block_name: str
    url: str


def automation_name(deployment: str) -> str:
    return f"veille: {deployment} en échec"


def channel_urls(
    deployment: str, config: DeliveryConfig, environ: Mapping[str, str]
) -> tuple[list[Channel], list[str]]:
    """The operators' channels whose URL is set, and the variables that are missing (named, never
    valued). The readers' channels (``[email]``, ``[[chat]]``) are never among them."""
    found: list[Channel] = []
    missing: list[str] = []
    operators = config.operators
    if operators is None:
        return found, missing
    if operators.to:
        if url := environ.get(operators.server_env, "").strip():
            found.append(Channel(f"veille-{deployment}-operators-email", with_recipients(url, operators.to)))
        else:
            missing.append(operators.server_env)
    for chat in operators.chat:
        if url := environ.get(chat.url_env, "").strip():
            found.append(Channel(f"veille-{deployment}-operators-chat-{chat.name}", url))
        else:
            missing.append(chat.url_env)
    return found, missing


def _structure(value: Any) -> Any:
    """``value`` with every set made a sorted tuple: sets (a trigger's ``expect``, ``after``,
    ``for_each``) compare by content, not by the order a process happens to iterate them in."""
    if isinstance(value, (set, frozenset)):
        return tuple(sorted((_structure(v) for v in value), key=repr))
    if isinstance(value, dict):
        return {k: _structure(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_structure(v) for v in value]
    return value


def same_automation(current: AutomationCore, wanted: AutomationCore) -> bool:
    """The automation the server holds is the one wanted, field by field (Python values: UUIDs,
    timedeltas, sets as sets). A JSON dump is not a structure: it writes a set as a list in the
    iteration order of the process that built it — the server's for ``current`` (its own hash seed),
    ours for ``wanted`` — so ``expect={Failed, Crashed}`` read back in the other order looked changed
    and a second ``veille setup`` said "updated" (for 4 of 41 hash seeds tried, ``set(FAILED_STATES)``
    and the same set built in the other order dump two different lists)."""
    return bool(_structure(current.model_dump()) == _structure(wanted.model_dump()))


def ensure_failure_automation(client: SyncPrefectClient, deployment: str, channels: Sequence[Channel]) -> str:
    """Create or update the automation of ``deployment`` (and its channels' blocks); returns
    "created", "updated" or "unchanged"."""
    from prefect.blocks.notifications import SlackWebhook
    from prefect.events.actions import SendNotification
    from prefect.events.schemas.automations import AutomationCore, EventTrigger, Posture

    actions = []
    for channel in channels:
        block_id = SlackWebhook(url=channel.url).save(channel.block_name, overwrite=True)  # type: ignore[arg-type]
        actions.append(
            SendNotification(
                block_document_id=block_id, subject=f"Veille {deployment} : nuit en échec", body=_BODY
            )
        )
    wanted = AutomationCore(
        name=automation_name(deployment),
        description=f"Notifie les opérateurs de {deployment} ([operators] de delivery.toml) quand une nuit échoue.",
        enabled=True,
        trigger=EventTrigger(
            expect=set(FAILED_STATES),
            match={"prefect.resource.id": "prefect.flow-run.*"},
            match_related={"prefect.resource.role": "deployment", "prefect.resource.name": deployment},
            posture=Posture.Reactive,
            threshold=1,
            within=timedelta(0),
        ),
        actions=actions,
    )
    existing = client.read_automations_by_name(wanted.name)
    if not existing:
        client.create_automation(wanted)
        return "created"
    current = AutomationCore.model_validate(existing[0].model_dump(exclude={"id"}))
    for extra in existing[1:]:  # one automation per deployment
        client.delete_automation(extra.id)
    if same_automation(current, wanted) and not existing[1:]:
        return "unchanged"
    client.update_automation(existing[0].id, wanted)
    return "updated"


def remove_failure_automation(client: SyncPrefectClient, deployment: str) -> bool:
    """Delete the automation of ``deployment`` (a watch without operators: an automation made by an
    older setup would keep notifying its readers); True when one was deleted."""
    existing = client.read_automations_by_name(automation_name(deployment))
    for automation in existing:
        client.delete_automation(automation.id)
    return bool(existing)


def former_reader_blocks(deployment: str, config: DeliveryConfig) -> list[str]:
    """The blocks an older setup stored for the readers' channels of ``deployment`` (their URLs,
    credentials included): nothing uses them once the automation notifies the operators."""
    return [f"veille-{deployment}-email", *(f"veille-{deployment}-chat-{c.name}" for c in config.chat)]


def remove_blocks(client: SyncPrefectClient, names: Sequence[str]) -> int:
    """Delete the notification blocks of these names that exist; returns how many."""
    from prefect.blocks.notifications import SlackWebhook
    from prefect.exceptions import ObjectNotFound

    slug = SlackWebhook.get_block_type_slug()
    removed = 0
    for name in names:
        try:
            block = client.read_block_document_by_name(name, slug, include_secrets=False)
        except ObjectNotFound:
            continue
        client.delete_block_document(block.id)
        removed += 1
    return removed
