"""Plan a survey: sample size, the smallest budget for a target accuracy, power, and a budget split over a
questionnaire (``docs/theory.md`` section 10)."""

from .plan import Plan, PlanRequest, SurveyPlan, make_plan, plan_survey
from .simulation_check import check_by_simulation
from .sizes import (
    BASES,
    EPS_MAX,
    Accuracy,
    BudgetPlan,
    PlanningError,
    SampleSize,
    accuracy_of,
    power_at,
    power_sample_size,
    price_of_privacy,
    sample_size,
    smallest_budget,
)
from .survey_plan import Allocation, Survey, allocate, joint_variance, load_survey, parse_survey

__all__ = ["BASES", "EPS_MAX", "Accuracy", "Allocation", "BudgetPlan", "Plan", "PlanRequest", "PlanningError",
           "SampleSize", "Survey", "SurveyPlan", "accuracy_of", "allocate", "check_by_simulation", "joint_variance",
           "load_survey", "make_plan", "parse_survey", "plan_survey", "power_at", "power_sample_size",
           "price_of_privacy", "sample_size", "smallest_budget"]
