"""Dashboard routes, mounted at the site root."""

from django.urls import path

from tournaments.dashboard import accounts, my_bots, scrimmages, views, write_a_bot

app_name = "dashboard"

urlpatterns = [
    path("", views.home, name="home"),
    path("leaderboard/", views.leaderboard_index, name="leaderboard-index"),
    path("leaderboard/<slug:variant>/", views.leaderboard_page, name="leaderboard"),
    path("bots/", views.bot_index, name="bots"),
    path("bots/<int:bot_id>/", views.bot_page, name="bot"),
    path("tournaments/", views.tournament_index, name="tournaments"),
    path("tournaments/<int:tournament_id>/", views.tournament_page, name="tournament"),
    path(
        "tournaments/<int:tournament_id>/progress.json",
        views.tournament_progress_json,
        name="tournament-progress",
    ),
    path("matches/", views.match_index, name="matches"),
    path("matches/<int:match_id>/", views.match_page, name="match"),
    path("variants/", views.variants_page, name="variants"),
    path("variants/<slug:name>/", views.variant_page, name="variant"),
    # Bot authors: accounts, their bots, and how to write one.
    path("signup/", accounts.sign_up, name="signup"),
    path("signin/", accounts.sign_in, name="signin"),
    path("signout/", accounts.sign_out, name="signout"),
    path("my/account/", accounts.account, name="account"),
    path("my/account/password/", accounts.account_password, name="account-password"),
    path("my/account/email/", accounts.account_email, name="account-email"),
    path("my/account/email/resend/", accounts.account_email_resend, name="account-email-resend"),
    path("confirm-email/<str:key>/", accounts.confirm_email, name="confirm-email"),
    path("my/account/revoke-token/", accounts.account_revoke_token, name="account-revoke-token"),
    path("password-reset/", accounts.password_reset, name="password-reset"),
    path("password-reset/sent/", accounts.password_reset_sent, name="password-reset-sent"),
    path("password-reset/done/", accounts.password_reset_complete, name="password-reset-complete"),
    path(
        "password-reset/<uidb64>/<token>/",
        accounts.password_reset_confirm,
        name="password-reset-confirm",
    ),
    path("my/bots/", my_bots.my_bots, name="my-bots"),
    path("my/bots/<int:bot_id>/", my_bots.my_bot, name="my-bot"),
    path("my/bots/<int:bot_id>/rotate-secret/", my_bots.my_bot_rotate, name="my-bot-rotate"),
    path("my/bots/<int:bot_id>/verify/", my_bots.my_bot_verify, name="my-bot-verify"),
    path("my/bots/<int:bot_id>/ladder/", my_bots.my_bot_ladder, name="my-bot-ladder"),
    path("my/bots/<int:bot_id>/practice/", scrimmages.my_bot_practice, name="my-bot-practice"),
    path(
        "my/bots/<int:bot_id>/scrimmages/", scrimmages.my_bot_scrimmages, name="my-bot-scrimmages"
    ),
    path("my/scrimmages/<int:scrimmage_id>/", scrimmages.my_scrimmage, name="my-scrimmage"),
    path(
        "my/scrimmages/<int:scrimmage_id>/cancel/",
        scrimmages.my_scrimmage_cancel,
        name="my-scrimmage-cancel",
    ),
    path("write-a-bot/", write_a_bot.write_bot, name="write-bot"),
    path("write-a-bot/rules/", write_a_bot.rules, name="rules"),
    path("write-a-bot/starter_bot.py", write_a_bot.starter_bot, name="starter-bot"),
    path("write-a-bot/starter_bot.js", write_a_bot.starter_bot_js, name="starter-bot-js"),
    path("write-a-bot/schemas/<str:name>", write_a_bot.protocol_schema, name="protocol-schema"),
]
