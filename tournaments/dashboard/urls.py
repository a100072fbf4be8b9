"""Dashboard routes, mounted at the site root."""

from django.urls import path

from tournaments.dashboard import authors, views

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
    path("signup/", authors.sign_up, name="signup"),
    path("signin/", authors.sign_in, name="signin"),
    path("signout/", authors.sign_out, name="signout"),
    path("my/account/", authors.account, name="account"),
    path("my/account/password/", authors.account_password, name="account-password"),
    path("my/account/email/", authors.account_email, name="account-email"),
    path("my/account/email/resend/", authors.account_email_resend, name="account-email-resend"),
    path("confirm-email/<str:key>/", authors.confirm_email, name="confirm-email"),
    path("my/account/revoke-token/", authors.account_revoke_token, name="account-revoke-token"),
    path("password-reset/", authors.password_reset, name="password-reset"),
    path("password-reset/sent/", authors.password_reset_sent, name="password-reset-sent"),
    path("password-reset/done/", authors.password_reset_complete, name="password-reset-complete"),
    path(
        "password-reset/<uidb64>/<token>/",
        authors.password_reset_confirm,
        name="password-reset-confirm",
    ),
    path("my/bots/", authors.my_bots, name="my-bots"),
    path("my/bots/<int:bot_id>/", authors.my_bot, name="my-bot"),
    path("my/bots/<int:bot_id>/rotate-secret/", authors.my_bot_rotate, name="my-bot-rotate"),
    path("my/bots/<int:bot_id>/verify/", authors.my_bot_verify, name="my-bot-verify"),
    path("my/bots/<int:bot_id>/ladder/", authors.my_bot_ladder, name="my-bot-ladder"),
    path("my/bots/<int:bot_id>/practice/", authors.my_bot_practice, name="my-bot-practice"),
    path("my/bots/<int:bot_id>/scrimmages/", authors.my_bot_scrimmages, name="my-bot-scrimmages"),
    path("my/scrimmages/<int:scrimmage_id>/", authors.my_scrimmage, name="my-scrimmage"),
    path("write-a-bot/", authors.write_bot, name="write-bot"),
    path("write-a-bot/rules/", authors.rules, name="rules"),
    path("write-a-bot/starter_bot.py", authors.starter_bot, name="starter-bot"),
    path("write-a-bot/starter_bot.js", authors.starter_bot_js, name="starter-bot-js"),
    path("write-a-bot/schemas/<str:name>", authors.protocol_schema, name="protocol-schema"),
]
