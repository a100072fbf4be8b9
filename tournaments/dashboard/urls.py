"""Dashboard routes, mounted at the site root."""

from django.urls import path

from tournaments.dashboard import views

app_name = "dashboard"

urlpatterns = [
    path("", views.home, name="home"),
    path("leaderboard/", views.leaderboard_index, name="leaderboard-index"),
    path("leaderboard/<slug:variant>/", views.leaderboard_page, name="leaderboard"),
    path("bots/<int:bot_id>/", views.bot_page, name="bot"),
    path("tournaments/", views.tournament_index, name="tournaments"),
    path("tournaments/<int:tournament_id>/", views.tournament_page, name="tournament"),
    path(
        "tournaments/<int:tournament_id>/progress.json",
        views.tournament_progress_json,
        name="tournament-progress",
    ),
    path("matches/<int:match_id>/", views.match_page, name="match"),
    path("variants/", views.variants_page, name="variants"),
]
