"""The bot endpoints, with the fixed cast: owner, other user, staff, anonymous."""

from __future__ import annotations

import pytest

from tests.support.api import error_of
from tests.support.users import client_for
from tournaments.models import Bot, BotHealthCheck, BotStatus

PUBLIC_URL = "https://93.184.216.34/bot"


def register(client, **fields):
    data = {"name": "my-bot", "endpoint_url": PUBLIC_URL, **fields}
    return client.post("/api/bots/", data, format="json")


class TestRegister:
    def test_registering_a_bot_answers_its_secret_once(self, owner_client, owner) -> None:
        response = register(owner_client, description="plays the lowest card")
        assert response.status_code == 201
        body = response.json()
        bot = Bot.objects.get(pk=body["id"])
        assert body["secret"] == bot.secret and len(bot.secret) >= 40
        assert body["owner"] == "owner" and body["status"] == "pending"
        assert bot.owner == owner and bot.endpoint_url == PUBLIC_URL

    def test_the_eleventh_bot_of_an_account_is_refused_naming_the_owner(self, owner_client) -> None:
        for n in range(10):
            assert register(owner_client, name=f"bot-{n}").status_code == 201
        response = register(owner_client, name="bot-10")
        assert response.status_code == 409
        error = error_of(response)
        assert error["detail"]["owner"] == ["An account may register at most 10 bots."]
        assert Bot.objects.count() == 10 and not Bot.objects.filter(name="bot-10").exists()

    def test_the_cap_follows_the_setting_and_staff_are_exempt(
        self, owner_client, staff_client, settings
    ) -> None:
        settings.BOTS_PER_ACCOUNT_MAX = 2
        for n in range(2):
            assert register(owner_client, name=f"mine-{n}").status_code == 201
        assert register(owner_client, name="mine-2").status_code == 409
        for n in range(3):
            assert register(staff_client, name=f"house-{n}").status_code == 201

    def test_anonymous_cannot_register_a_bot(self, anonymous_client) -> None:
        response = register(anonymous_client)
        assert response.status_code == 401
        assert error_of(response)["code"] == "not_authenticated"
        assert Bot.objects.count() == 0

    def test_bot_names_are_unique_whatever_the_case(self, owner_client, other_client) -> None:
        assert register(owner_client, name="Spade").status_code == 201
        response = register(other_client, name="sPADE")
        assert response.status_code == 409
        assert "already exists" in error_of(response)["message"]
        assert Bot.objects.count() == 1

    @pytest.mark.parametrize(
        ("fields", "field"),
        [
            ({"name": None}, "name"),
            ({"name": ""}, "name"),
            ({"name": ["a"]}, "name"),
            ({"name": {"x": 1}}, "name"),
            ({"name": True}, "name"),
            ({"name": "x" * 65}, "name"),
            ({"name": "no spaces please"}, "name"),
            ({"name": "<script>"}, "name"),
            ({"endpoint_url": None}, "endpoint_url"),
            ({"endpoint_url": 12}, "endpoint_url"),
            ({"endpoint_url": "https://" + "a" * 600 + ".org/"}, "endpoint_url"),
            ({"endpoint_url": "javascript:alert(1)"}, "endpoint_url"),
            ({"endpoint_url": "file:///etc/passwd"}, "endpoint_url"),
            ({"endpoint_url": "ftp://93.184.216.34/"}, "endpoint_url"),
            ({"endpoint_url": "https://user:pw@93.184.216.34/"}, "endpoint_url"),
            ({"endpoint_url": "https://user@93.184.216.34/"}, "endpoint_url"),
            ({"endpoint_url": "http://127.0.0.1:8000/"}, "endpoint_url"),
            ({"endpoint_url": "http://localhost/"}, "endpoint_url"),
            ({"endpoint_url": "http://[::1]/"}, "endpoint_url"),
            ({"endpoint_url": "http://10.1.2.3/"}, "endpoint_url"),
            ({"endpoint_url": "http://169.254.169.254/latest/meta-data/"}, "endpoint_url"),
            ({"endpoint_url": "http://[::ffff:169.254.169.254]/"}, "endpoint_url"),
            ({"endpoint_url": "http://224.0.0.1/"}, "endpoint_url"),
            ({"endpoint_url": "http://93.184.216.34:99999/"}, "endpoint_url"),
            ({"endpoint_url": "http:///nohost"}, "endpoint_url"),
            ({"endpoint_url": "not a url"}, "endpoint_url"),
            ({"description": "d" * 501}, "description"),
        ],
    )
    def test_bad_registration_input_is_refused_and_nothing_is_written(
        self, owner_client, fields, field
    ) -> None:
        response = register(owner_client, **fields)
        assert response.status_code == 400
        error = error_of(response)
        assert field in error["detail"]
        assert error["message"].startswith(f"{field}: ")
        assert Bot.objects.count() == 0

    def test_missing_fields_are_each_named(self, owner_client) -> None:
        response = owner_client.post("/api/bots/", {}, format="json")
        assert response.status_code == 400
        assert set(error_of(response)["detail"]) == {"name", "endpoint_url"}
        assert Bot.objects.count() == 0

    def test_a_body_that_is_not_an_object_is_refused(self, owner_client) -> None:
        response = owner_client.post("/api/bots/", "[1, 2]", content_type="application/json")
        assert response.status_code == 400
        assert Bot.objects.count() == 0

    def test_allowed_networks_let_a_private_endpoint_register(self, owner_client, settings) -> None:
        import ipaddress

        settings.BOT_ALLOWED_NETWORKS = [ipaddress.ip_network("10.1.0.0/16")]
        assert register(owner_client, endpoint_url="http://10.1.2.3/").status_code == 201
        assert register(owner_client, name="b2", endpoint_url="http://10.2.0.1/").status_code == 400


class TestRead:
    @pytest.mark.parametrize("who", ["owner", "other", "staff", "anonymous"])
    def test_nobody_reads_a_secret_after_registration(self, who, bot, request) -> None:
        client = {
            "owner": lambda: client_for(request.getfixturevalue("owner")),
            "other": lambda: client_for(request.getfixturevalue("other_user")),
            "staff": lambda: client_for(request.getfixturevalue("staff")),
            "anonymous": lambda: client_for(None),
        }[who]()
        for url in ("/api/bots/", f"/api/bots/{bot.pk}/", f"/api/bots/{bot.pk}/health-checks/"):
            response = client.get(url)
            assert response.status_code == 200
            assert bot.secret not in response.content.decode()
            assert "secret" not in response.content.decode()

    def test_only_the_owner_and_staff_see_the_endpoint(
        self, bot, owner_client, staff_client, other_client, anonymous_client
    ) -> None:
        assert owner_client.get(f"/api/bots/{bot.pk}/").json()["endpoint_url"] == bot.endpoint_url
        assert staff_client.get(f"/api/bots/{bot.pk}/").json()["endpoint_url"] == bot.endpoint_url
        assert other_client.get(f"/api/bots/{bot.pk}/").json()["endpoint_url"] is None
        assert anonymous_client.get(f"/api/bots/{bot.pk}/").json()["endpoint_url"] is None

    def test_the_list_filters_orders_and_pages(
        self, make_bot, owner, other_user, owner_client
    ) -> None:
        for i in range(5):
            make_bot(owner, name=f"alpha-{i}")
        make_bot(other_user, name="beta", status=BotStatus.ACTIVE)
        page = owner_client.get("/api/bots/?page_size=2&ordering=-name").json()
        assert page["count"] == 6 and [b["name"] for b in page["results"]] == ["beta", "alpha-4"]
        assert owner_client.get("/api/bots/?status=active").json()["count"] == 1
        assert owner_client.get("/api/bots/?owner=other").json()["count"] == 1
        assert owner_client.get("/api/bots/?mine=true").json()["count"] == 5
        assert owner_client.get("/api/bots/?name=ALPHA").json()["count"] == 5

    def test_a_bad_filter_value_is_a_clear_400(self, owner_client) -> None:
        response = owner_client.get("/api/bots/?status=sleeping")
        assert response.status_code == 400
        assert "status" in error_of(response)["detail"]

    def test_an_unknown_bot_is_a_json_404(self, anonymous_client) -> None:
        response = anonymous_client.get("/api/bots/999999/")
        assert response.status_code == 404
        assert error_of(response)["code"] == "not_found"


class TestChange:
    def test_the_owner_renames_a_bot(self, bot, owner_client) -> None:
        response = owner_client.patch(f"/api/bots/{bot.pk}/", {"name": "renamed"}, format="json")
        assert response.status_code == 200 and response.json()["name"] == "renamed"
        bot.refresh_from_db()
        assert bot.name == "renamed"

    def test_a_new_endpoint_sends_an_active_bot_back_to_verification(
        self, bot, owner_client
    ) -> None:
        Bot.objects.filter(pk=bot.pk).update(status=BotStatus.ACTIVE)
        new_url = "https://93.184.216.35/bot"
        response = owner_client.patch(
            f"/api/bots/{bot.pk}/", {"endpoint_url": new_url}, format="json"
        )
        assert response.status_code == 200
        bot.refresh_from_db()
        assert (bot.endpoint_url, bot.status) == (new_url, BotStatus.PENDING)

    @pytest.mark.parametrize(
        ("client_fixture", "status"),
        [("other_client", 403), ("staff_client", 403), ("anonymous_client", 401)],
    )
    def test_nobody_but_the_owner_changes_or_deletes_a_bot(
        self, bot, client_fixture, status, request
    ) -> None:
        client = request.getfixturevalue(client_fixture)
        before = Bot.objects.values().get(pk=bot.pk)
        calls = [
            client.patch(f"/api/bots/{bot.pk}/", {"name": "stolen"}, format="json"),
            client.put(f"/api/bots/{bot.pk}/", {"name": "stolen"}, format="json"),
            client.delete(f"/api/bots/{bot.pk}/"),
            client.post(f"/api/bots/{bot.pk}/rotate-secret/"),
            client.post(f"/api/bots/{bot.pk}/verify/"),
        ]
        assert [c.status_code for c in calls] == [
            status,
            405 if status != 401 else 401,
            status,
            status,
            status,
        ]
        for call in calls:
            error_of(call)
            assert bot.secret not in call.content.decode()
        assert Bot.objects.values().get(pk=bot.pk) == before
        assert BotHealthCheck.objects.count() == 0

    @pytest.mark.parametrize(
        ("fields", "field"),
        [
            ({"name": ""}, "name"),
            ({"name": 5.5}, "name"),
            ({"name": "x" * 65}, "name"),
            ({"endpoint_url": "javascript:alert(1)"}, "endpoint_url"),
            ({"endpoint_url": "https://a:b@93.184.216.34/"}, "endpoint_url"),
            ({"endpoint_url": "http://169.254.169.254/"}, "endpoint_url"),
            ({"description": ["x"]}, "description"),
        ],
    )
    def test_bad_changes_are_refused_and_nothing_is_written(
        self, bot, owner_client, fields, field
    ) -> None:
        before = Bot.objects.values().get(pk=bot.pk)
        response = owner_client.patch(f"/api/bots/{bot.pk}/", fields, format="json")
        assert response.status_code == 400
        assert field in error_of(response)["detail"]
        assert Bot.objects.values().get(pk=bot.pk) == before

    def test_renaming_onto_another_bots_name_is_a_conflict(
        self, bot, make_bot, other_user, owner_client
    ) -> None:
        make_bot(other_user, name="taken")
        response = owner_client.patch(f"/api/bots/{bot.pk}/", {"name": "TAKEN"}, format="json")
        assert response.status_code == 409
        bot.refresh_from_db()
        assert bot.name == "owned-bot"

    def test_the_owner_deletes_a_bot_that_never_played(self, bot, owner_client) -> None:
        assert owner_client.delete(f"/api/bots/{bot.pk}/").status_code == 204
        assert not Bot.objects.filter(pk=bot.pk).exists()

    def test_a_bot_with_recorded_matches_is_kept(self, bot, owner_client, oh_hell) -> None:
        from tournaments.models import Match, MatchSeat

        MatchSeat.objects.create(match=Match.objects.create(variant=oh_hell), seat=0, bot=bot)
        response = owner_client.delete(f"/api/bots/{bot.pk}/")
        assert response.status_code == 409
        assert "disabled" in error_of(response)["message"]
        assert Bot.objects.filter(pk=bot.pk).exists()

    def test_rotating_the_secret_answers_the_new_one_once(self, bot, owner_client) -> None:
        old = bot.secret
        response = owner_client.post(f"/api/bots/{bot.pk}/rotate-secret/")
        assert response.status_code == 200
        bot.refresh_from_db()
        assert response.json()["secret"] == bot.secret != old
        assert bot.secret not in owner_client.get(f"/api/bots/{bot.pk}/").content.decode()
