from django.apps import AppConfig


class DevServerConfig(AppConfig):
    """Listed before `django.contrib.staticfiles`: the first app that has a command gives it."""

    name = "mangalord.devserver"
    label = "devserver"
